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
from pathlib import Path

from ..llm.install import importable
from .common import UsageError, check_writable, fail, kb_from_args, number_option
from .options import Deprecated

TRAIN_HINT = "pip install 'barsym[train]'"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "distill",
        help="fine-tune the embedded model on the symbolic oracle's answers",
        description="Generate training data from the symbolic planner and the simulator in the LLM "
        "planners' own prompts (BAR's and DEPS' task goals held out), fine-tune the "
        "embedded model with LoRA on the CPU, and write a GGUF for barsym plan --model.",
    )
    p.add_argument("--out", metavar="MODEL.gguf", help="the GGUF to write (required unless --data-only)")
    p.add_argument(
        "--data-only",
        metavar="FILE.jsonl",
        help="only write the training examples to FILE and stop (needs no [train] extra)",
    )
    p.add_argument("--data", metavar="FILE.jsonl", help="train on these examples instead of generating them")
    p.add_argument("--examples", default="2000", help="how many examples to generate (default 2000)")
    p.add_argument(
        "--mix", help="shares of the example kinds, e.g. cot=3,deps=3,bar-nofacts=2,bar=1,score=1 (the default)"
    )
    p.add_argument("--steps", default="200", help="optimizer steps (default 200)")
    p.add_argument("--accumulate", default="4", help="examples per optimizer step (default 4)")
    p.add_argument("--lora-rank", default="16", help="LoRA rank (default 16)")
    p.add_argument(
        "--lora-layers",
        help="put adapters on the last N transformer blocks only (default: all); "
        "fewer is cheaper: the backward pass stops at the lowest",
    )
    p.add_argument("--learning-rate", default="5e-4", help="AdamW learning rate (default 5e-4)")
    p.add_argument(
        "--seq-len", default="512", help="longest example tail after the shared prompt prefix, in tokens (default 512)"
    )
    p.add_argument("--minutes", help="stop training after this many minutes and write the model anyway")
    p.add_argument("--threads", help="torch threads (default: torch's choice)")
    p.add_argument(
        "--out-type",
        choices=["q8_0", "f16", "f32"],
        default="q8_0",
        help="precision of the trained tensors in the GGUF (default q8_0)",
    )
    p.add_argument("--base", metavar="MODEL.gguf", help="the GGUF to start from (default: the embedded model)")
    p.add_argument(
        "--train-seed", dest="seed", default="0", metavar="N", help="seed of the data and the training (default 0)"
    )
    p.add_argument("--seed", dest="seed", action=Deprecated, new="--train-seed", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def missing_train_extra() -> str | None:
    """The [train] extra's modules this install lacks, as words; None when all are there."""
    from ..distill import TRAIN_MODULES

    missing = [m for m in TRAIN_MODULES if not importable(m)]
    if not missing:
        return None
    return f"{missing[0]} is not installed" if len(missing) == 1 else f"{', '.join(missing)} are not installed"


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:
        return fail(str(exc))


def _run(args: argparse.Namespace) -> int:
    examples = number_option(args.examples, "--examples", int, 1, 1_000_000)
    seed = number_option(args.seed, "--train-seed", int, 0)
    if args.data_only is None and args.out is None:
        raise UsageError("give --out MODEL.gguf (the model to write), or --data-only FILE.jsonl for the data alone")
    if args.data_only is not None and args.data is not None:
        raise UsageError("--data-only writes examples and --data reads them: give one of the two")
    if args.data_only is None:
        missing = missing_train_extra()
        if missing:
            raise UsageError(
                f"barsym distill trains with torch, transformers, peft and gguf, and {missing}: "
                f"{TRAIN_HINT} (or use --data-only FILE.jsonl for the data alone)"
            )
    out_data = Path(args.data_only) if args.data_only else None
    check_writable(out_data, "--data-only")
    check_writable(Path(args.out) if args.out else None, "--out")
    kb = kb_from_args(args)
    if args.data is not None:
        rows = _read(Path(args.data))
    else:
        rows = _generate(kb, examples, seed, args.mix, out_data)
    if out_data is not None:
        return 0
    return _train(args, rows, seed)


def _generate(kb, n: int, seed: int, mix: str | None, path: Path | None) -> list[dict]:
    from ..distill.data import DataError, DataGenerator, parse_mix

    try:
        shares = parse_mix(mix)
    except DataError as exc:
        raise UsageError(str(exc)) from None
    started = time.perf_counter()
    generator = DataGenerator(kb, seed)
    _say(f"data: {len(generator.pool.goals)} training goals; {len(generator.pool.held_out)} BAR/DEPS goals held out")
    rows = list(generator.generate(n, shares, progress=_counter("data")))
    _say(
        f"data: {len(rows)} examples in {time.perf_counter() - started:.1f} s ("
        + ", ".join(f"{k} {sum(r['kind'] == k for r in rows)}" for k in shares)
        + ")"
    )
    if path is not None:
        from ..distill.data import write_jsonl

        write_jsonl(rows, path)
        _say(f"data: written to {path}")
    return rows


def _read(path: Path) -> list[dict]:
    from ..distill.data import read_jsonl

    try:
        rows = read_jsonl(path)
    except FileNotFoundError:
        raise UsageError(f"--data {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--data {path}: not a JSON-lines file of examples ({exc})") from None
    bad = next(
        (i for i, r in enumerate(rows, 1) if not isinstance(r, dict) or not {"kind", "messages", "reply"} <= set(r)),
        None,
    )
    if bad is not None or not rows:
        raise UsageError(
            f"--data {path}: line {bad or 1} is not an example (kind, messages, reply); write the file with --data-only"
        )
    return rows


def _train(args, rows: list[dict], seed: int) -> int:
    from ..distill.pipeline import distill
    from ..distill.train import TrainConfig
    from ..llm.embedded import default_model_path

    config = TrainConfig(
        steps=number_option(args.steps, "--steps", int, 1, 1_000_000),
        lora_rank=number_option(args.lora_rank, "--lora-rank", int, 1, 1024),
        lora_layers=number_option(args.lora_layers, "--lora-layers", int, 1, 1024),
        learning_rate=number_option(args.learning_rate, "--learning-rate", float, 1e-7, 1.0),
        seq_len=number_option(args.seq_len, "--seq-len", int, 16, 8192),
        accumulate=number_option(args.accumulate, "--accumulate", int, 1, 1024),
        minutes=number_option(args.minutes, "--minutes", float, 0.0),
        threads=number_option(args.threads, "--threads", int, 1, 256),
        seed=seed,
    )
    from ..llm.base import ModelNotFoundError

    try:
        base = str(default_model_path(args.base))
    except ModelNotFoundError as exc:
        raise UsageError(f"--base: {exc}") from None
    summary = distill(rows, base, args.out, config, out_type=args.out_type, log=_say)
    _say(f"wrote {args.out} ({summary['gguf_bytes'] / 1e6:.1f} MB); load it with --model {args.out}")
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
