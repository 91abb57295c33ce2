"""Dump the symbolic planner's answers on BAR's 53 tasks, DEPS' 70 and Plancraft's train split to JSON.

    PYTHONPATH=src python tools/dump_symbolic_plans.py OUT.json [--datasets DIR] [--only bar,deps,plancraft]

Why: a refactor of the rule book must not change any plan. Run it on the base
commit and on the changed tree, then ``diff`` the two files: empty means every
plan, decomposition tree, step dependency, validation verdict and planning error
is the same. Plancraft's tasks run under the rule profile the task set implies
(``crafting``), from their start inventories, as ``barsym eval`` runs them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: warning codes left out of the dump (``--ignore-warning``): a new kind of warning is not a changed plan
IGNORED: set[str] = set()


def answer(planner, task) -> dict:
    from barsym.planner import PlanningError

    try:
        result = planner.plan(task.goal, task.start) if task.start is not None else planner.plan(task.goal)
    except PlanningError as exc:
        return {"error": exc.kind.value, "message": exc.message}
    validation = result.validation
    return {
        "plan": [str(step) for step in result.plan.steps],
        "raw_steps": [str(step) for step in result.raw_steps],
        "needs": [list(n) for n in result.needs],
        "tree": result.tree(),
        "verdict": validation.verdict.value,
        "errors": [e.to_dict() for e in validation.errors],
        "warnings": [w.to_dict() for w in validation.warnings if w.code not in IGNORED],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--only", default="bar,deps,plancraft")
    parser.add_argument("--ignore-warning", action="append", default=[], metavar="CODE")
    args = parser.parse_args(argv)
    IGNORED.update(args.ignore_warning)

    from barsym.eval import load_dataset
    from barsym.kb import load_kb
    from barsym.planner import make_planner

    kb = load_kb()
    sets = {
        "bar": (args.datasets / "bar_tech_tree", None),
        "deps": (args.datasets / "deps_tasks.json", "deps" if "deps" in kb.dialects else None),
        "plancraft": (args.datasets / "plancraft" / "train.json", None),
    }
    out: dict = {}
    planners: dict = {}
    for name in args.only.split(","):
        path, dialect = sets[name]
        started = time.perf_counter()
        tasks = load_dataset(path, kb, dialect=dialect)
        answers = out[name] = {}
        for task in tasks:
            key = task.rules
            if key not in planners:
                planners[key] = make_planner("symbolic", kb, rules=task.rules)
            answers[task.key] = answer(planners[key], task)
        print(f"{name}: {len(tasks)} tasks in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
