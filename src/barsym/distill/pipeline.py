"""Train, check the layout, write the adapter: the part of ``barsym distill`` that needs the ``[train]`` extra.

The layout check runs on the *base* weights before training starts (a
mapping error costs seconds, not a training run). While training runs, the
adapter and a resumable checkpoint are written every few minutes, each to a
temporary file renamed over the last (a run stopped at any moment leaves the
previous pair whole, :mod:`barsym.atomic_files`); the last pair is written when training stops. The
adapter is read back once to be sure every tensor is there.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections.abc import Callable

from ..atomic_files import replacing, write_atomic
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
    warm_start: str | None = None,
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
        with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as scratch:
            made = os.path.join(scratch, "adapter.gguf")  # the gguf writer wants a path of its own
            write_adapter(base, tensors, made, alpha=config.lora_alpha, out_type=out_type, metadata=metadata)
            with open(made, "rb") as written:
                write_atomic(out, written.read())
        with replacing(checkpoint_path(out), binary=True) as handle:
            torch.save(state, handle)
        log(f"step {state['step']}: wrote {out} and {checkpoint_path(out)}")

    model, summary = train(
        rows, base, config, log=log, before=check, resume=resume, warm_start=warm_start, checkpoint=save
    )
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
