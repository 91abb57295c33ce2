"""Re-read a stored ``cot`` run's plans through :func:`fold_repeats` and score them against BAR's experts.

    PYTHONPATH=src python tools/refold_cot_run.py docs/results/runs/cot-facts-bar53.jsonl.gz

Why: the fold works on the model's reply after decoding, so with greedy
decoding and unchanged prompts a rerun would give the same replies; re-reading
the stored plans measures the fold without an hour of model time. Prints the
run as stored and folded: AccuracyHard, F1, edit distance, executable plans.
"""

from __future__ import annotations

import sys
from pathlib import Path

from barsym.bar_io import step_from_record
from barsym.eval.dataset import load_dataset
from barsym.eval.runfile import read_run
from barsym.kb import load_kb
from barsym.metrics import GroupScore, score_task
from barsym.model import Goal, Plan
from barsym.reasoning.grammars.forward_plans import ReadPlan, fold_repeats
from barsym.validation import Validator


def main(path: str) -> None:
    kb = load_kb()
    validator = Validator(kb)
    expert = {task.key: list(task.reference.steps) for task in load_dataset("bar", kb) if task.reference is not None}
    _, rows, _ = read_run(Path(path))  # plain or compressed (.jsonl.gz)
    for fold in (False, True):
        scores, executable, folded = GroupScore(), 0, 0
        for row in rows:
            steps = tuple(step_from_record(record, row["key"]) for record in row["plan"])
            if fold:
                read, n = fold_repeats(ReadPlan(steps))
                steps, folded = read.steps, folded + n
            scores.add(score_task(list(steps), expert[row["key"]]))
            executable += validator.validate(Plan(steps=steps), goal=Goal(**row["goal"])).valid
        print(
            f"{'folded' if fold else 'stored'}: {len(rows)} tasks, Acc {scores.accuracy:.2f} F1 {scores.f1:.2f} "
            f"ED {scores.edit_distance:.2f}, executable {executable}/{len(rows)}, steps folded {folded}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
