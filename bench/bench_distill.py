"""Benchmark: a model (the embedded one or a distilled GGUF) on held-out and on seen goals.

    python bench/bench_distill.py --model MODEL.gguf [--what cot,bar-nofacts,deps] [--limit N]
                                  [--seen N] [--data data.jsonl] [--threads 1] [--json FILE] [--by-item]

What ``barsym distill`` is judged by (issue 23, item 5), on goals it never saw
as a goal: BAR's 53 targets and DEPS' 70 (held out of the training data by
:mod:`barsym.distill.goals`), and, with ``--seen N``, on N goals it was trained
on (read from ``--data``), so learning is told apart from memorising.

- ``cot``: chain-of-thought plans on BAR's 53 goals; executable = the validator
  accepts the plan for the goal.
- ``bar-nofacts``: BAR's decomposer without the knowledge base's facts in the
  prompt; first-try accepted answers over LLM goals (the issue's 182/391 for
  the base model). ``--by-item`` also prints them per goal item, from the
  call log of the run (a temporary one), with the first reply to each: which
  goals the model answers and which it does not.
- ``deps``: DEPS on its 70 tasks (5 rounds, stochastic world); success = an
  episode reached the goal.

Each line is printed as the task finishes (the machine is slow and shared).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from barsym.eval.dataset import load_dataset, resolve_dataset
from barsym.kb import load_kb
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.validation import Validator


def goals(kb, dataset: str, limit: int | None) -> list[Goal]:
    path, dialect = resolve_dataset(dataset)
    tasks = load_dataset(path, kb, dialect)
    return [t.goal for t in tasks][:limit]


def seen_goals(path: str, kinds: set[str], n: int) -> list[Goal]:
    found: list[Goal] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["kind"] in kinds and row["count"] == 1 and "You start with" not in row["messages"][-1]["content"]:
                goal = Goal(item=row["goal"], count=1)
                if goal not in found:
                    found.append(goal)
            if len(found) >= n:
                break
    return found


def first_tries_by_item(path: Path) -> list[dict]:
    """From a call log: per goal item, first attempts accepted / asked and the first reply, most asked first."""
    from barsym.reasoning.calls.call_log import CallLog

    log = CallLog(path, create=False)
    try:
        records, _ = log.readable(limit=None)
    finally:
        log.close()
    asked: Counter = Counter()
    accepted: Counter = Counter()
    reply: dict[str, str] = {}
    for record in records:
        if record.attempt == 1:
            item = record.goal.split(" ", 1)[-1]
            asked[item] += 1
            accepted[item] += record.verdict == "accepted"
            reply.setdefault(item, record.reply or "")
    return [{"item": i, "first_try": accepted[i], "asked": n, "reply": reply[i]} for i, n in asked.most_common()]


def run(
    kb,
    what: str,
    model: str | None,
    threads: int,
    targets: list[Goal],
    label: str,
    rounds: int = 5,
    adapter=None,
    by_item: bool = False,
) -> dict:
    validator = Validator(kb)
    log_file = Path(tempfile.mkdtemp(prefix="bench-distill-")) / "calls.db" if by_item else None
    if log_file is not None:
        os.environ["BARSYM_LOG_DB"] = str(log_file)  # this run's calls only
    options = dict(model=model, threads=threads, log=log_file is not None, adapter=adapter)
    if what == "deps":
        options["deps_rounds"] = rounds
    if what == "bar-nofacts":
        planner = make_planner("bar", kb, facts=False, **options)
    else:
        planner = make_planner(what, kb, **options)
    good = first = asked = 0
    started = time.perf_counter()
    for i, goal in enumerate(targets, 1):
        try:
            result = planner.plan(goal)
        except PlanningError as exc:
            print(f"  {label} {what} {i}/{len(targets)} {goal.item}: no plan ({exc})", flush=True)
            continue
        if what == "bar-nofacts":
            llm = result.stats.llm
            first += llm.accepted_first_try
            asked += llm.llm_goals
            ok = llm.accepted_first_try
            mark = f"{llm.accepted_first_try}/{llm.llm_goals} first try"
        elif what == "deps":
            ok = getattr(result.trace, "success_round", None) is not None
            mark = "success" if ok else "failed"
        else:
            ok = validator.validate(result.plan, goal).valid
            mark = "executable" if ok else "not executable"
        good += bool(ok)
        print(f"  {label} {what} {i}/{len(targets)} {goal.item}: {mark}", flush=True)
    out = {
        "what": what,
        "goals": label,
        "tasks": len(targets),
        "model": model,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if what == "bar-nofacts":
        out.update(first_try=first, llm_goals=asked)
        if log_file is not None:
            out["by_item"] = first_tries_by_item(log_file)
            for row in out["by_item"]:
                print(f"  {row['item']:32s} {row['first_try']:4d} / {row['asked']:<4d} first: {row['reply']}")
    else:
        out["good"] = good
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="GGUF to evaluate (default: the embedded model)")
    parser.add_argument("--what", default="cot,bar-nofacts,deps")
    parser.add_argument("--limit", type=int, help="only the first N held-out tasks of each set")
    parser.add_argument("--seen", type=int, default=0, help="also N goals from the training data (needs --data)")
    parser.add_argument("--data", help="the training examples (barsym distill --data-only)")
    parser.add_argument("--adapter", help="LoRA adapter (default: the shipped one for the embedded model; none: base)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--rounds", type=int, default=5, help="deps: replanning rounds (default 5, DEPS' own)")
    parser.add_argument("--by-item", action="store_true", help="bar-nofacts: first tries per goal item, with a reply")
    args = parser.parse_args(argv)
    kb = load_kb()
    results = []
    for what in args.what.split(","):
        dataset = "deps" if what == "deps" else "bar"
        results.append(
            run(
                kb,
                what,
                args.model,
                args.threads,
                goals(kb, dataset, args.limit),
                f"held-out {dataset}",
                args.rounds,
                args.adapter,
                args.by_item,
            )
        )
        print(json.dumps({k: v for k, v in results[-1].items() if k != "by_item"}), flush=True)
        if args.seen and args.data:
            kinds = {"deps"} if what == "deps" else ({"bar-nofacts", "bar"} if what == "bar-nofacts" else {"cot"})
            results.append(
                run(
                    kb,
                    what,
                    args.model,
                    args.threads,
                    seen_goals(args.data, kinds, args.seen),
                    "seen",
                    args.rounds,
                    args.adapter,
                )
            )
            print(json.dumps(results[-1]), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
