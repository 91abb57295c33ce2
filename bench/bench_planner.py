"""Benchmark: symbolic planning of BAR's 53 tasks and of every craftable item.

    python bench/bench_planner.py [--dataset ../shared/datasets/bar_tech_tree] [--repeat 5]

Times are wall-clock after the knowledge base is loaded (the load is reported
separately). Planning includes the validator pass every plan gets. Targets
(issue 3): all 53 tasks < 0.5 s, every craftable/smeltable item < 5 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.model import Goal  # noqa: E402
from barsym.planner import PlanningError, make_planner  # noqa: E402


def timed(fn, repeat: int) -> tuple[float, float, object]:
    runs, last = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        last = fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), min(runs), last


def plan_all(planner, goals):
    counts = {"planned": 0, "unreachable": 0, "no_return": 0, "failed": 0}
    for goal in goals:
        try:
            planner.plan(goal)
            counts["planned"] += 1
        except PlanningError as exc:
            counts[exc.kind if exc.kind in counts else "failed"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    kb = load_kb()
    load = time.perf_counter() - start
    start = time.perf_counter()
    planner = make_planner("symbolic", kb)
    _ = planner.graph.costs  # graph build and cost fixpoint, paid once per process
    setup = time.perf_counter() - start
    print(f"knowledge base load: {load * 1000:.1f} ms; planner setup (graph + costs): {setup * 1000:.1f} ms")

    tasks = load_dataset(args.dataset, kb)
    goals = [t.goal for t in tasks]
    median, best, counts = timed(lambda: plan_all(planner, goals), args.repeat)
    print(
        f"BAR tech tree, {len(goals)} tasks: median {median:.3f} s, best {best:.3f} s "
        f"({median / len(goals) * 1000:.2f} ms/task) {counts} -- target < 0.5 s"
    )

    items = [Goal(item=i) for i in sorted(set(kb.crafts) | set(kb.smelts))]
    median, best, counts = timed(lambda: plan_all(planner, items), args.repeat)
    print(
        f"every craftable/smeltable item, {len(items)} goals: median {median:.3f} s, best {best:.3f} s {counts} "
        f"-- target < 5 s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
