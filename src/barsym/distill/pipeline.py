"""Train, check the layout, write the adapter: the part of ``barsym distill`` that needs the ``[train]`` extra.

The layout check runs on the *base* weights before training starts (a
mapping error costs seconds, not a training run). While training runs, the
adapter and a resumable checkpoint are written every few minutes, each to a
temporary file renamed over the last (a run stopped at any moment leaves the
previous pair whole); the last pair is written when training stops. The
adapter is read back once to be sure every tensor is there.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable

from ..consistency.anchors import SCORE_METHOD_KEY
from .gguf_out import check_layout, gguf_weights, lora_tensors, write_adapter
from .train import TrainConfig, train
from .verdicts import taught_score_method


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def checkpoint_path(out: str) -> str:
    return out + ".ckpt"


def distill(
    rows: list[dict],
    base: str,
    out: str,
    config: TrainConfig,
    *,
    out_type: str = "f16",
    resume: str | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    import torch
    from gguf import GGUFReader

    started = time.perf_counter()
    checked: dict = {}
    method = taught_score_method(rows)
    metadata = {SCORE_METHOD_KEY: method.value} if method else {}

    def check(model) -> None:
        weights = gguf_weights(model.state_dict(), model.config)
        check_layout(GGUFReader(base), weights, layers=(0, model.config.num_hidden_layers - 1))
        checked["ok"] = True

    def save(model, state: dict) -> None:
        tensors = lora_tensors(model.state_dict(), model.get_base_model().config)
        for path, write in (
            (
                out,
                lambda tmp: write_adapter(
                    base, tensors, tmp, alpha=config.lora_alpha, out_type=out_type, metadata=metadata
                ),
            ),
            (checkpoint_path(out), lambda tmp: torch.save(state, tmp)),
        ):
            tmp = f"{path}.tmp-{os.getpid()}"
            try:
                write(tmp)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        log(f"step {state['step']}: wrote {out} and {checkpoint_path(out)}")

    model, summary = train(rows, base, config, log=log, before=check, resume=resume, checkpoint=save)
    reread = GGUFReader(out)
    expected = 2 * len(LORA_PROJECTIONS) * summary["lora_layers"]
    if len(reread.tensors) != expected:
        raise RuntimeError(f"{out}: {len(reread.tensors)} adapter tensors written, {expected} expected")
    summary.update(
        base=base,
        out=out,
        out_type=out_type,
        adapter_bytes=os.path.getsize(out),
        total_seconds=round(time.perf_counter() - started, 1),
        peak_rss_mb=round(peak_rss_mb()),
        layout_checked=bool(checked),
        score_method=method.value if method else None,
    )
    return summary


LORA_PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")
