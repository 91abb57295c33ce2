"""Train, check the layout, write the GGUF: the part of ``barsym distill`` that needs the ``[train]`` extra.

The layout check runs on the *base* weights before training starts (a
mapping error costs seconds, not a training run), and the written file is
read back once to be sure every tensor is there.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable

from ..consistency.anchors import SCORE_METHOD_KEY
from .gguf_out import check_layout, gguf_weights, write_gguf
from .train import TrainConfig, train
from .verdicts import taught_score_method


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def distill(
    rows: list[dict],
    base: str,
    out: str,
    config: TrainConfig,
    *,
    out_type: str = "q8_0",
    log: Callable[[str], None] = print,
) -> dict:
    from gguf import GGUFReader

    started = time.perf_counter()
    checked: dict = {}

    def check(model) -> None:
        weights = gguf_weights(model.state_dict(), model.config)
        check_layout(GGUFReader(base), weights, layers=(0, model.config.num_hidden_layers - 1))
        checked["ok"] = True

    merged, summary = train(rows, base, config, log=log, before=check)
    log(f"training done in {summary['train_seconds']:.0f} s; writing {out}")
    written = time.perf_counter()
    weights = gguf_weights(merged.state_dict(), merged.config)
    import numpy as np

    np.savez(out + ".weights.npz", **weights)  # the trained projections, should writing the GGUF fail
    method = taught_score_method(rows)
    write_gguf(base, weights, out, out_type, metadata={SCORE_METHOD_KEY: method.value} if method else None)
    reread = GGUFReader(out)
    if len(reread.tensors) != len(GGUFReader(base).tensors):
        raise RuntimeError(f"{out}: {len(reread.tensors)} tensors written, the base has more")
    summary.update(
        base=base,
        out=out,
        out_type=out_type,
        gguf_bytes=os.path.getsize(out),
        write_seconds=round(time.perf_counter() - written, 1),
        total_seconds=round(time.perf_counter() - started, 1),
        peak_rss_mb=round(peak_rss_mb()),
        layout_checked=bool(checked),
        score_method=method.value if method else None,
    )
    return summary
