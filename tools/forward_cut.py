"""What ending forward plans at their goal makes of a run file's plans: executable before and after.

    python tools/forward_cut.py docs/results/runs/taught-cot-bar53.before-cut.jsonl.gz

A run written before forward plans ended at their goal (``reasoning.forward_plans.parse_plan_text``)
keeps the model's whole plan. Under greedy decoding the model writes the same lines up to the goal's
step either way, so cutting the stored plan there gives the plan the planner now returns (for a
one-call planner such as cot; for DEPS the final round's plan, a lower bound, since an earlier round
may now succeed). Prints each task whose verdict changes and the totals.
"""

from __future__ import annotations

import sys
from pathlib import Path

from barsym import api
from barsym.bar_io import step_from_record
from barsym.eval.runfile import RunFileError, read_run
from barsym.model import Goal
from barsym.reasoning.grammars.forward_plans import makes_goal


def main(path: str) -> int:
    kb = api.knowledge_base()
    try:
        _, tasks, _ = read_run(Path(path))
    except RunFileError as exc:
        print(f"forward_cut: {exc}", file=sys.stderr)
        return 2
    before = after = 0
    for task in tasks:
        goal = Goal(item=task["goal"]["item"], count=task["goal"]["count"])
        steps = [step_from_record(s, task["key"]) for s in task.get("plan") or []]
        cut = next((i + 1 for i, s in enumerate(steps) if makes_goal(s, goal, kb)), len(steps))
        was = bool(steps) and api.validate(steps, goal=goal).valid
        now = bool(steps) and api.validate(steps[:cut], goal=goal).valid
        before, after = before + was, after + now
        if was != now:
            print(
                f"{task['key']}: {'executable' if was else 'not executable'} -> "
                f"{'executable' if now else 'not executable'} ({len(steps) - cut} step(s) past the goal)"
            )
    print(f"executable plans: {before} -> {after} of {len(tasks)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tools/forward_cut.py RUN.jsonl")
    sys.exit(main(sys.argv[1]))
