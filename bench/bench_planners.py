"""Benchmark: every planner on BAR's 53 tasks with the embedded model, in one table.

    python bench/bench_planners.py [--dataset bar] [--rounds 5]
                                   [--planners symbolic,bar,bar-sc,deps,cot,llm-only] [--limit N]
                                   [--stand-ins copy-facts,largest,random,first] [--model-planners bar,llm-only]
                                   [--threads 2] [--json FILE]

Rows: ``symbolic``, ``bar``, ``bar-sc``, ``deps`` twice (its round-0 plan, read from the same run's
trace, and its plan after at most ``--rounds`` replanning rounds), ``cot``, ``llm-only``. Beside every
LLM planner run with the model come its stand-in rows (``bar[copy-facts]``, ``bar[largest]``, ...:
the same planner with a chooser under the same grammar and prompt instead of the model, see
:mod:`barsym.llm.stand_in`), so what the model adds is visible; ``--stand-ins ""`` drops them, and
``--model-planners`` limits the (slow) model rows to some planners (default: all of them). Columns:
BAR's AccuracyHard, F1ScoreHard and EditDistanceHard over all tasks, executable plans (validator),
LLM calls per task and wall seconds per task (mean). The model is loaded once, before any timing.
DEPS' feedback world is the stochastic one, seeded, so the table is the same on every run.
Wrap it in ``flock /tmp/barsym-bench.lock`` on a shared machine: it runs the model for a long time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import evaluate, load_dataset  # noqa: E402
from barsym.eval.dataset import resolve_dataset  # noqa: E402
from barsym.eval.runner import Evaluation  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.llm.stand_in import STAND_INS  # noqa: E402
from barsym.metrics import score_task  # noqa: E402
from barsym.model import Plan  # noqa: E402
from barsym.planner import make_planner  # noqa: E402
from barsym.planner.registry import llm_planners, planner_label  # noqa: E402
from barsym.validation import Validator  # noqa: E402

DEFAULT = "symbolic,bar,bar-sc,deps,cot,llm-only"


def row(name: str, evaluation: Evaluation) -> dict:
    total = evaluation.overall()
    outcomes = evaluation.outcomes
    calls = [(o.result.stats.model.llm_calls if o.result else 0) for o in outcomes]
    return {
        "planner": name,
        "tasks": len(outcomes),
        "acc": round(total.accuracy, 2),
        "f1": round(total.f1, 2),
        "ed": round(total.edit_distance, 2),
        "executable": sum(o.result is not None and o.result.validation.valid for o in outcomes),
        "calls_per_task": round(statistics.fmean(calls), 2) if calls else 0.0,
        "seconds_per_task": round(statistics.fmean(o.seconds for o in outcomes), 2) if outcomes else 0.0,
    }


def round_zero(kb, evaluation: Evaluation) -> Evaluation:
    """DEPS' plans as round 0 left them (the same run: the trace keeps every round's plan)."""
    validator = Validator(kb)
    out = Evaluation("deps (round 0)")
    for o in evaluation.outcomes:
        copy = dataclasses.replace(o)
        if o.result is not None and o.result.trace is not None:
            steps = o.result.trace.plan_after(0) or ()
            plan = Plan(steps=tuple(steps))
            validation = validator.validate(plan, goal=o.task.goal)
            copy.result = dataclasses.replace(
                o.result,
                plan=plan,
                validation=validation,
                stats=dataclasses.replace(o.result.stats, llm=dataclasses.replace(o.result.stats.model, llm_calls=1)),
            )
            copy.score = score_task(plan, o.task.reference)
            copy.seconds = float("nan")  # not measured apart: round 0 is part of the deps run
        out.outcomes.append(copy)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bar", help="a bundled task set's name or a path (default bar)")
    parser.add_argument("--planners", default=DEFAULT)
    parser.add_argument(
        "--stand-ins",
        default=",".join(STAND_INS),
        help="stand-in rows beside each LLM planner (default all; '' for none)",
    )
    parser.add_argument("--model-planners", help="LLM planners to run with the model too (default all; '' none)")
    parser.add_argument("--rounds", type=int, default=5, help="DEPS' replanning rounds at most")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kb = load_kb()
    path, dialect = resolve_dataset(args.dataset)
    tasks = load_dataset(path, kb, dialect=dialect)[: args.limit]
    planners = [n for n in args.planners.split(",") if n]
    stand_ins = [s for s in args.stand_ins.split(",") if s]
    with_model = set(planners if args.model_planners is None else [n for n in args.model_planners.split(",") if n])
    runs = []  # (name, options) in table order: each LLM planner's model row, then its stand-in rows
    for name in planners:
        if name not in llm_planners():
            runs.append((name, None))
            continue
        options = {"threads": args.threads, "log": False, **({"deps_rounds": args.rounds} if name == "deps" else {})}
        if name in with_model:
            runs.append((name, options))
        runs += [(name, {**options, "llm_stand_in": s}) for s in stand_ins]
    if any(o is not None and "llm_stand_in" not in o for _, o in runs):  # load the model before any timing
        from barsym.llm.settings import ModelSettings
        from barsym.reasoning.calls.backends import backend_for

        backend_for(ModelSettings(threads=args.threads))
    rows = []
    for name, options in runs:
        planner = make_planner(name, kb) if options is None else make_planner(name, kb, **options)
        label = planner_label(name, options)
        evaluation = evaluate(tasks, planner, kb, name=label)
        if name == "deps":
            rows.append(row(f"{label} (round 0)", round_zero(kb, evaluation)))
            rows.append(row(f"{label} (<= {args.rounds} rounds)", evaluation))
        else:
            rows.append(row(label, evaluation))
        print(f"done: {rows[-1]}", file=sys.stderr, flush=True)
    print(f"{len(tasks)} BAR tasks, embedded model, {args.threads} threads")
    print("| planner | Acc | F1 | ED | executable | LLM calls / task | s / task |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        seconds = "-" if r["seconds_per_task"] != r["seconds_per_task"] else f"{r['seconds_per_task']:.2f}"
        print(
            f"| {r['planner']} | {r['acc']:.2f} | {r['f1']:.2f} | {r['ed']:.2f} | {r['executable']}/{r['tasks']} "
            f"| {r['calls_per_task']:.1f} | {seconds} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
