"""Benchmark: DEPS on its own tasks, success per group MT1-MT8 and the rounds ablation 0..R, in one run.

    python bench/bench_deps.py [--dataset ../shared/datasets/deps_tasks.json] [--rounds 5] [--runs 30]
                               [--per-group N] [--threads 2] [--selector order] [--json FILE]

DEPS is run once per task with at most ``--rounds`` replanning rounds (its feedback world: stochastic,
seeded). Its trace keeps every round's plan, so the plan it would have returned with only ``r`` rounds
is known for every ``r`` without running it again. Each of those plans is then executed ``--runs``
times in the stochastic world (seeded from the task's name, as ``barsym eval --world`` does) and the
table gives the success rate per group and per ``r``. ``--per-group N`` takes the first N tasks of each
group (the model is slow on two cores; say so when you report a subset). ``--selector`` (order, the
default, random, graph, horizon) is DEPS' selector among steps that can run at once: it drives the
loop's own feedback episodes and the table's runs alike (each run with the same seed as in plan
order). Wrap it in ``flock /tmp/barsym-bench.lock``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.model import Plan  # noqa: E402
from barsym.planner import PlanningError, make_planner  # noqa: E402
from barsym.planner.registry import graph_for  # noqa: E402
from barsym.planner.selector import SELECTORS, execute, make_selector, plan_needs  # noqa: E402
from barsym.sim import StochasticWorld, run  # noqa: E402
from barsym.sim.stochastic import derive_seed  # noqa: E402


def successes(world, steps, goal, runs: int, seed: int, selector: str) -> int:
    """Successful runs of a plan: as written (``run``), or picked by ``selector`` with the same seeds."""
    if selector == "order":
        return run(Plan(steps=tuple(steps)), world, runs=runs, seed=seed, goal=goal).successes
    needs, budget, graph = plan_needs(world, steps), world.default_budget(steps), graph_for(world.kb)
    return sum(
        execute(
            world,
            steps,
            needs,
            make_selector(selector, world, graph, derive_seed(seed, i)),
            goal,
            derive_seed(seed, i),
            budget,
        ).success
        for i in range(runs)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(REPO.parent / "shared" / "datasets" / "deps_tasks.json"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--per-group", type=int)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--selector", choices=SELECTORS, default="order")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kb = load_kb()
    tasks = load_dataset(args.dataset, kb, dialect="deps")
    if args.per_group:
        seen: dict[str, int] = defaultdict(int)
        chosen = []
        for t in tasks:
            if seen[t.group] < args.per_group:
                seen[t.group] += 1
                chosen.append(t)
        tasks = chosen
    planner = make_planner("deps", kb, deps_rounds=args.rounds, threads=args.threads, log=False, selector=args.selector)
    world = StochasticWorld(kb)
    groups = sorted({t.group for t in tasks})
    wins = {g: [0] * (args.rounds + 1) for g in groups}
    runs = dict.fromkeys(groups, 0)
    records = {}
    started = time.perf_counter()
    for number, task in enumerate(tasks, 1):
        t0 = time.perf_counter()
        try:
            result = planner.plan(task.goal)
            trace = result.trace
        except PlanningError as exc:
            result, trace = None, None
            print(f"{task.key}: no plan ({exc.message})", file=sys.stderr)
        seed = zlib.crc32(task.key.encode())
        runs[task.group] += args.runs
        rates = []
        for r in range(args.rounds + 1):
            steps = trace.plan_after(r) if trace is not None else None
            if not steps:
                rates.append(0)
                continue
            won = successes(world, steps, task.goal, args.runs, seed, args.selector)
            wins[task.group][r] += won
            rates.append(won)
        records[task.key] = {
            "successes_by_round": rates,
            "rounds": len(trace.rounds) if trace else 0,
            "success_round": trace.success_round if trace else None,
            "stopped": trace.stopped.value if trace else "no plan",
            "dropped_rounds": max((r.dropped_rounds for r in trace.rounds), default=0) if trace else 0,
            "seconds": round(time.perf_counter() - t0, 2),
            "llm_calls": result.stats.model.llm_calls if result else 0,
        }
        print(f"[{number}/{len(tasks)}] {task.key}: {records[task.key]}", file=sys.stderr, flush=True)
    total = time.perf_counter() - started
    print(
        f"DEPS on {len(tasks)} of its tasks ({args.dataset}), <= {args.rounds} rounds, "
        f"{args.runs} stochastic runs per plan, selector {args.selector}; "
        f"{total / max(1, len(tasks)):.1f} s per task"
    )
    head = " | ".join(f"r={r}" for r in range(args.rounds + 1))
    print(f"| group | tasks | {head} |")
    print("| --- | ---: | " + " | ".join("---:" for _ in range(args.rounds + 1)) + " |")
    all_wins, all_runs = [0] * (args.rounds + 1), 0
    for g in groups:
        n = sum(t.group == g for t in tasks)
        cells = " | ".join(f"{100 * w / runs[g]:.1f} %" for w in wins[g])
        print(f"| {g} | {n} | {cells} |")
        all_wins = [a + b for a, b in zip(all_wins, wins[g])]
        all_runs += runs[g]
    print(f"| all | {len(tasks)} | " + " | ".join(f"{100 * w / all_runs:.1f} %" for w in all_wins) + " |")
    in_loop = sum(rec["success_round"] is not None for rec in records.values())
    print(f"tasks whose DEPS loop reached the goal in its own feedback episodes: {in_loop}/{len(tasks)}")
    if args.json:
        args.json.write_text(
            json.dumps({"selector": args.selector, "tasks": records, "wins": wins, "runs": runs}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
