"""Average LoRA adapters of one base into one adapter of the same rank (a "soup" of their weight changes).

    python tools/average_adapters.py A.gguf B.gguf [...] --base BASE.gguf --out SOUP.gguf [--rank 16]

Why: fresh adapters taught on the same base with recipes that differ in small ways land far apart
on single rows (CoT 34-42 of 53, step-score AUC 0.66-0.87, docs/results/taught-model.md): each try
is one draw. Averaging what each adapter adds to a weight, ``mean_i(alpha_i / r_i * B_i A_i)``,
keeps what they share and damps what one draw learned alone. The sum has rank up to the
adapters' ranks added up, and a wider adapter costs time on every token, so the average is cut
back to ``--rank`` by its singular value decomposition (the best approximation of that rank) and
written with alpha = rank, i.e. scale 1. Needs numpy and the ``gguf`` package (the [train] extra).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.distill.gguf_out import write_adapter  # noqa: E402


def read_adapter(path: Path) -> tuple[dict[str, np.ndarray], float, dict[str, str]]:
    """An adapter GGUF's LoRA tensors (float32, numpy order), its alpha and its other string keys."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    if reader.fields["adapter.type"].contents() != "lora":
        raise SystemExit(f"{path}: not a LoRA adapter GGUF")
    alpha = float(reader.fields["adapter.lora.alpha"].contents())
    skip = {"general.architecture", "general.type", "general.name", "adapter.type", "adapter.lora.alpha"}
    strings = {}
    for key, field in reader.fields.items():
        if key in skip or key.startswith("GGUF."):
            continue
        value = field.contents()
        if isinstance(value, str):
            strings[key] = value
    tensors = {t.name: np.asarray(t.data, dtype=np.float32).reshape(tuple(reversed(t.shape))) for t in reader.tensors}
    return tensors, alpha, strings


def average(adapters: list[tuple[dict[str, np.ndarray], float]], rank: int) -> dict[str, np.ndarray]:
    """The mean of the adapters' weight changes, per adapted weight, as rank-``rank`` factors (scale 1)."""
    names = sorted(k[: -len(".lora_a")] for k in adapters[0][0] if k.endswith(".lora_a"))
    for tensors, _ in adapters[1:]:
        if sorted(k[: -len(".lora_a")] for k in tensors if k.endswith(".lora_a")) != names:
            raise SystemExit("the adapters adapt different weights: average adapters of the same shape only")
    out: dict[str, np.ndarray] = {}
    for name in names:
        delta = sum(
            (alpha / t[f"{name}.lora_a"].shape[0]) * (t[f"{name}.lora_b"] @ t[f"{name}.lora_a"])
            for t, alpha in adapters
        ) / len(adapters)
        u, s, vt = np.linalg.svd(delta, full_matrices=False)
        root = np.sqrt(s[:rank])
        out[f"{name}.lora_a"] = np.ascontiguousarray(root[:, None] * vt[:rank], dtype=np.float32)
        out[f"{name}.lora_b"] = np.ascontiguousarray(u[:, :rank] * root[None, :], dtype=np.float32)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("adapters", type=Path, nargs="+")
    parser.add_argument("--base", type=Path, required=True, help="the base GGUF every adapter was taught on")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rank", type=int, default=16)
    args = parser.parse_args()
    if len(args.adapters) < 2:
        parser.error("give two adapters or more")
    read = [read_adapter(p) for p in args.adapters]
    tensors = average([(t, alpha) for t, alpha, _ in read], args.rank)
    metadata = read[0][2]
    for path, (_, _, strings) in zip(args.adapters[1:], read[1:]):
        if strings != metadata:
            raise SystemExit(f"{path}: its barsym keys differ from {args.adapters[0]}'s ({strings} vs {metadata})")
    names = ", ".join(p.name for p in args.adapters)
    write_adapter(
        str(args.base),
        tensors,
        str(args.out),
        alpha=float(args.rank),
        name=f"barsym average of {names}",
        metadata=metadata,
    )
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes): the mean of {names}, rank {args.rank}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
