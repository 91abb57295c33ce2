"""Benchmark: DEPS' horizon-predictive selector against plan order, random and the graph's cost, in one table.

    python bench/bench_selector.py [--dataset ../shared/datasets/deps_tasks.json] [--runs 200]
                                   [--train-episodes 20] [--budget-scale 1.0] [--json FILE]

The plans are the symbolic planner's for DEPS' tasks (no model: this measures the selector alone).
A task has parallel sub-goals when, executing its plan, some point offers more than one step that can
run (its needs done, applicable now). The horizon model is fitted on rollouts of every task's plan in
the stochastic world (seeds 1..), in random ready order; it is scored on fresh rollouts (seed 2) and
the selectors are compared on other seeds again, the same seeds for every selector (common random
numbers). Per selector: success under the world's budget for each plan (``--budget-scale`` shrinks
it), mean and median ticks of successful runs, over the tasks with parallel sub-goals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.planner import PlanningError, make_planner  # noqa: E402
from barsym.planner.registry import graph_for  # noqa: E402
from barsym.planner.selector import Features, GraphCost, Horizon, HorizonModel, PlanOrder, RandomPick, collect, execute  # noqa: E402
from barsym.sim import DeterministicWorld, StochasticWorld, wilson_interval  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(REPO.parent / "shared" / "datasets" / "deps_tasks.json"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--train-episodes", type=int, default=20)
    parser.add_argument("--budget-scale", type=float, default=1.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kb = load_kb()
    graph = graph_for(kb)
    symbolic = make_planner("symbolic", kb)
    world, flat = StochasticWorld(kb), DeterministicWorld(kb)
    plans = {}
    for task in load_dataset(args.dataset, kb, dialect="deps"):
        try:
            result = symbolic.plan(task.goal)
        except PlanningError:
            continue
        plans[task.key] = (task, result.plan.steps, tuple(result.needs))
    parallel = {
        k: v for k, v in plans.items() if execute(flat, v[1], v[2], PlanOrder(), v[0].goal, 0, None).choices > 0
    }
    features = Features(world)
    started = time.perf_counter()
    train = collect(world, [(s, n) for _, s, n in plans.values()], args.train_episodes, 1, features)
    model = HorizonModel.fit(train, features)
    test = collect(world, [(s, n) for _, s, n in plans.values()], 3, 2, features)
    mae = statistics.fmean(abs(model.predict_vector(x) - y) for x, y in test)
    spread = statistics.fmean(abs(statistics.fmean(y for _, y in test) - y) for _, y in test)
    fit_seconds = time.perf_counter() - started
    selectors = [PlanOrder(), RandomPick(7), GraphCost(graph), Horizon(model)]
    rows = []
    for selector in selectors:
        wins = runs = choices = 0
        ticks = []
        for task, steps, needs in parallel.values():
            budget = round(world.default_budget(steps) * args.budget_scale)
            for r in range(args.runs):
                out = execute(world, steps, needs, selector, task.goal, 10_000 + r, budget)
                runs += 1
                wins += out.success
                choices += out.choices
                if out.success:
                    ticks.append(out.ticks)
        low, high = wilson_interval(wins, runs)
        rows.append(
            {
                "selector": selector.name,
                "tasks": len(parallel),
                "runs": runs,
                "success": wins / runs,
                "interval": [low, high],
                "mean_ticks": statistics.fmean(ticks) if ticks else None,
                "median_ticks": statistics.median(ticks) if ticks else None,
                "choices_per_run": choices / runs,
            }
        )
    print(
        f"{len(parallel)} of {len(plans)} DEPS tasks have parallel sub-goals (symbolic plans); stochastic world, "
        f"{args.runs} runs per task and selector, budget x{args.budget_scale:g}"
    )
    print(
        f"horizon model: {len(train)} training steps, held-out mean abs error {mae:,.0f} ticks "
        f"(predicting the mean: {spread:,.0f}); fitted in {fit_seconds:.1f} s"
    )
    print("| selector | success | 95 % interval | mean ticks (successes) | median ticks | choices per run |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        low, high = r["interval"]
        print(
            f"| {r['selector']} | {100 * r['success']:.1f} % | {100 * low:.1f}-{100 * high:.1f} % | "
            f"{r['mean_ticks']:,.0f} | {r['median_ticks']:,.0f} | {r['choices_per_run']:.1f} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"tasks": sorted(parallel), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
