"""Benchmark: the stochastic execution world on BAR's 53 expert plans.

    python bench/bench_execute.py [--dataset ../shared/datasets/bar_tech_tree] [--runs 200] [--seed 0] [--json FILE]

Prints the throughput (steps executed per second; target >= 20,000), the wall
time of 53 plans x RUNS runs (target < 10 s for 200 runs on a 2-core machine),
and per group the success rate with its 95 % interval, the median ticks of
successful runs and the failures by code, which say why success falls as the
tech tree deepens. Each task is seeded as ``barsym eval --world`` seeds it
(from the seed and the task's name), so the table is eval's expert column.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: BAR's groups from the shallowest tech to the deepest
TREE_ORDER = ("stone", "iron", "gold", "redstone", "diamond")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--runs", type=int, default=200, help="runs per plan")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args()

    from barsym.bar_io import read_plan
    from barsym.eval.execution import task_seed
    from barsym.kb import load_kb
    from barsym.sim.execution import run, wilson_interval
    from barsym.sim.stochastic import StochasticWorld

    files = sorted(args.dataset.glob("*/*.jsonl"))
    if not files:
        print(f"no plans under {args.dataset}", file=sys.stderr)
        return 2
    kb = load_kb()
    world = StochasticWorld(kb)
    plans = [(path.parent.name, f"{path.parent.name}/{path.stem}", read_plan(path)) for path in files]

    started = time.perf_counter()
    executions = [(group, run(plan, world, args.runs, task_seed(args.seed, key))) for group, key, plan in plans]
    seconds = time.perf_counter() - started
    steps = sum(e.failed_step or len(x.plan.steps) for _, x in executions for e in x.episodes)

    print(f"{len(plans)} plans x {args.runs} runs: {seconds:.2f} s (target < 10 s for 200 runs)")
    print(f"throughput : {steps / seconds:,.0f} steps/s ({steps:,} steps; target >= 20,000)")
    print()
    groups: dict[str, dict] = defaultdict(
        lambda: {"tasks": 0, "runs": 0, "successes": 0, "ticks": [], "codes": Counter()}
    )
    for group, execution in executions:
        for name in (group, "all"):
            g = groups[name]
            g["tasks"] += 1
            g["runs"] += execution.runs
            g["successes"] += execution.successes
            g["ticks"] += [e.ticks for e in execution.episodes if e.success]
            for failure in execution.failures():
                g["codes"][failure.code] += failure.count
    codes = sorted({c for g in groups.values() for c in g["codes"]}, key=lambda c: -groups["all"]["codes"][c])
    print(f"{'group':<10} {'tasks':>5} {'success':>8} {'95 % interval':>14} {'median ticks':>13}  failures by code")
    table = {}
    seen = list(dict.fromkeys(g for g, _ in executions))
    order = [g for g in TREE_ORDER if g in seen] + [g for g in seen if g not in TREE_ORDER]
    for name in order + ["all"]:
        g = groups[name]
        low, high = wilson_interval(g["successes"], g["runs"])
        median = statistics.median(g["ticks"]) if g["ticks"] else None
        failures = ", ".join(f"{c} {g['codes'][c]}" for c in codes if g["codes"][c])
        print(
            f"{name:<10} {g['tasks']:>5} {100 * g['successes'] / g['runs']:>7.1f}% "
            f"{f'{100 * low:.1f}-{100 * high:.1f} %':>14} {median or 0:>13,.0f}  {failures}"
        )
        table[name] = {
            "tasks": g["tasks"],
            "runs": g["runs"],
            "success_rate": g["successes"] / g["runs"],
            "interval": [low, high],
            "median_ticks": median,
            "failures": dict(g["codes"]),
        }
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "seconds": seconds,
                    "steps": steps,
                    "steps_per_second": steps / seconds,
                    "runs": args.runs,
                    "seed": args.seed,
                    "groups": table,
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
