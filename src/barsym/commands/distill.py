"""``barsym distill --out model.gguf``: teach the embedded model from the symbolic oracle (barsym.distill).

Three phases, each reported as it runs: the training examples (the planners'
own prompts, the oracle's replies, BAR's and DEPS' goals held out), LoRA
fine-tuning on the CPU, and the GGUF written for ``--model``. ``--data-only
FILE.jsonl`` stops after the first and needs nothing beyond barsym; the rest
needs the ``[train]`` extra (torch, transformers, peft, gguf), checked before
any work starts. ``--data FILE.jsonl`` trains on examples written before.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

from ..distill import TRAIN_HINT, missing_train_extra
from ..distill.options import DistillOptions, TrainConfig
from .common import UsageError, check_writable, kb_from_args
from .options import add_model, read_model

HELP = "fine-tune the embedded model on the symbolic oracle's answers"
DESCRIPTION = (
    "Generate training data from the symbolic planner and the simulator in the LLM "
    "planners' own prompts (BAR's and DEPS' task goals held out), fine-tune the "
    "embedded model with LoRA on the CPU, and write a GGUF for barsym plan --model."
)


def add_arguments(p) -> None:
    add_model(p, DistillOptions)
    add_model(p, TrainConfig, "training", skip=("lora_alpha", "refresh"), deprecated={"--seed": "seed"})


def run(args: argparse.Namespace) -> int:
    options, config = read_model(args, DistillOptions), read_model(args, TrainConfig)
    if options.data_only is None and (missing := missing_train_extra()):
        raise UsageError(
            f"barsym distill trains with torch, transformers, peft and gguf, and {missing}: "
            f"{TRAIN_HINT} (or use --data-only FILE.jsonl for the data alone)"
        )
    check_writable(options.data_only, "--data-only")
    check_writable(options.out, "--out")
    for flag, checkpoint in (("--resume", options.resume), ("--warm-start", options.warm_start)):
        if checkpoint is not None:
            _check_checkpoint(flag, checkpoint, config)
    kb = kb_from_args(args)
    if options.data is not None:
        from ..distill.data import DataError, read_examples

        try:
            rows = read_examples(options.data)
        except DataError as exc:
            raise UsageError(f"--data {options.data}: {exc}") from None
    else:
        rows = _generate(kb, options, config.seed)
    if options.data_only is not None:
        return 0
    return _train(options, rows, config)


def _check_checkpoint(flag: str, path, config: TrainConfig) -> None:
    """A checkpoint that cannot be gone on from, as one line before anything loads: missing, planted (it would
    run code), damaged, or made with other settings. Read without unpickling it (:mod:`barsym.distill.checkpoint`)."""
    from ..distill.adapter_start import adapter_checkpoint, is_adapter
    from ..distill.checkpoint import CheckpointError, inspect
    from ..distill.train_checkpoint import check_fits

    if not path.is_file():
        raise UsageError(f"{flag} {path}: no such checkpoint (an earlier run writes OUT.ckpt beside OUT)")
    resume = flag == "--resume"
    if is_adapter(path):  # an adapter GGUF, the shipped one included (distill/adapter_start.py)
        if resume:
            raise UsageError(
                f"{flag} {path}: an adapter GGUF holds no optimizer state to go on with; "
                "give it to --warm-start, or --resume the run's OUT.ckpt"
            )
        try:
            check_fits(adapter_checkpoint(path), config, resume=False)
        except ValueError as exc:
            raise UsageError(f"{flag} {path}: {exc}") from None
        return
    try:
        check_fits(inspect(path, resume=resume), config, resume=resume)
    except CheckpointError as exc:
        raise UsageError(f"{flag} {path}: {exc}; give a checkpoint barsym distill wrote (OUT.ckpt)") from None
    except ValueError as exc:
        raise UsageError(f"{flag} {path}: {exc}") from None


def _generate(kb, options: DistillOptions, seed: int) -> list[dict]:
    from ..distill.data import DataGenerator, write_jsonl

    n, shares, path = options.examples, options.mix, options.data_only
    started = time.perf_counter()
    generator = DataGenerator(kb, seed, options.goals)
    _say(f"data: {len(generator.pool.goals)} training goals; {len(generator.pool.held_out)} BAR/DEPS goals held out")
    rows = list(generator.generate(n, shares, progress=_counter("data")))
    kinds = Counter(r["kind"] for r in rows)  # by the examples' kind: cot-empty's are cot examples
    _say(
        f"data: {len(rows)} examples in {time.perf_counter() - started:.1f} s ("
        + ", ".join(f"{k} {count}" for k, count in kinds.most_common())
        + ")"
    )
    if path is not None:
        write_jsonl(rows, path)
        _say(f"data: written to {path}")
    return rows


def _train(options: DistillOptions, rows: list[dict], config: TrainConfig) -> int:
    from ..distill.pipeline import distill
    from ..llm.base import ModelNotFoundError
    from ..llm.llamacpp.embedded import default_model_path

    try:
        base = str(default_model_path(options.base))
    except ModelNotFoundError as exc:
        raise UsageError(f"--base: {exc}") from None
    out = str(options.out)
    resume = str(options.resume) if options.resume is not None else None
    warm = str(options.warm_start) if options.warm_start is not None else None
    try:
        summary = distill(rows, base, out, config, out_type=options.out_type, resume=resume, warm_start=warm, log=_say)
    except ValueError as exc:
        if resume is None and warm is None:
            raise
        raise UsageError(f"--{'resume' if resume else 'warm-start'} {resume or warm}: {exc}") from None
    _say(f"wrote {out} ({summary['adapter_bytes'] / 1e6:.1f} MB); load it with --adapter {out}")
    print(json.dumps(summary, indent=2))
    return 0


def _say(text: str) -> None:
    print(f"barsym distill: {text}", file=sys.stderr, flush=True)


def _counter(what: str):
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 5 or done == total:
            last[0] = now
            _say(f"{what}: {done}/{total} examples")

    return progress
