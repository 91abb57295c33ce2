"""A labelled step set: steps of expert and faulty plans with the simulator's verdict, for judging step scorers.

Why: a step scorer (the model's 1-10 rating, read in any way) is only worth
its cost if it tells the steps that cannot run from those that can. The
simulator knows which is which, so a set labelled by it measures a scorer
without any human labels: AUC and Spearman of the scores against the labels
(``bench/bench_step_scores.py``).

The plans are BAR's expert plans (every step can run: the positives) and
faulty variants of them: the fault classes of BAR's module (b) that
:func:`~barsym.consistency.faults.repair_faults` injects (a dropped dig down or
furnace, the crafting table moved after its first use, a count cut in half)
and one more, a step moved before what it needs (the plan's last craft moved
to the front). A step is *good* when the validator plays it without a
failure, the steps before it played as written; its label is also kept as
the simulator's 1-10 score (:func:`~barsym.consistency.scores.simulator_scores`).

The set is balanced and small on purpose (each model call costs time): per
task and fault class the first variant, its first failing step (where the
fault shows; the knock-on failures after it would outnumber everything else)
and one passing step drawn with a fixed seed; from every expert plan one step.

A second set, :func:`dropped_steps`, holds faults of another kind than those a scorer's method was
shaped on: from every expert plan one step dropped (drawn with the seed among the drops that break a
later step), labelled as above. A method that only learned the injected fault classes shows it here.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..model import Goal, Plan, Step
from ..validation import Validator
from .faults import moved_before_needs, repair_faults
from .scores import simulator_scores

__all__ = ["LabelledStep", "dropped_steps", "labelled_steps", "moved_before_needs"]


@dataclass(frozen=True)
class LabelledStep:
    task: str
    fault: str  # "expert" or the fault class
    goal: Goal
    steps: tuple[Step, ...]  # the whole plan the step is part of
    number: int  # 1-based
    good: bool  # the validator plays it without a failure
    simulator_score: int  # the deterministic 1-10 score (k = 3)

    @property
    def step(self) -> Step:
        return self.steps[self.number - 1]

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "fault": self.fault,
            "goal": f"{self.goal.count} {self.goal.item}",
            "number": self.number,
            "step": str(self.step),
            "good": self.good,
            "simulator_score": self.simulator_score,
        }


def _variants(plan: Plan, validator: Validator) -> Iterator[tuple[str, list[Step]]]:
    yield "expert", list(plan.steps)
    for fault in repair_faults(plan, validator):
        yield fault.kind, fault.steps
    moved = moved_before_needs(list(plan.steps))
    if moved is not None:
        yield "step moved before its needs", moved


def labelled_steps(tasks: Iterable, validator: Validator, *, seed: int = 0, k: int = 3) -> list[LabelledStep]:
    """The balanced set over ``tasks`` (objects with ``key``, ``goal`` and an expert ``reference`` plan)."""
    rng = random.Random(seed)
    out: list[LabelledStep] = []
    for task in tasks:
        if task.reference is None or not task.reference.steps:
            continue
        seen: set[str] = set()
        for fault, steps in _variants(task.reference, validator):
            if fault in seen:
                continue
            plan = Plan(steps=tuple(steps))
            result = validator.validate(plan, goal=task.goal)
            failed = set(result.failed_steps)
            scores = [s.score for s in simulator_scores(validator, result, k)]
            numbers = range(1, len(steps) + 1)
            bad = [n for n in numbers if n in failed]
            good = [n for n in numbers if n not in failed]
            if fault == "expert":
                chosen = rng.sample(good, 1) if good else []
            elif not bad:
                continue  # a fault that spare units covered: nothing to tell apart
            else:
                seen.add(fault)
                chosen = bad[:1] + rng.sample(good, min(len(good), 1))
            for n in sorted(chosen):
                out.append(LabelledStep(task.key, fault, task.goal, plan.steps, n, n not in failed, scores[n - 1]))
    return out


def dropped_steps(tasks: Iterable, validator: Validator, *, seed: int = 0, k: int = 3) -> list[LabelledStep]:
    """Expert plans with one step dropped: per task its first failing step and one passing step (seeded)."""
    rng = random.Random(seed)
    out: list[LabelledStep] = []
    for task in tasks:
        if task.reference is None or len(task.reference.steps) < 2:
            continue
        steps = list(task.reference.steps)
        order = list(range(len(steps)))
        rng.shuffle(order)
        for i in order:
            plan = Plan(steps=tuple(steps[:i] + steps[i + 1 :]))
            result = validator.validate(plan, goal=task.goal)
            failed = sorted(set(result.failed_steps))
            if not failed:
                continue  # spare units covered the drop: nothing to tell apart
            scores = [s.score for s in simulator_scores(validator, result, k)]
            good = [n for n in range(1, len(plan.steps) + 1) if n not in failed]
            chosen = failed[:1] + rng.sample(good, min(len(good), 1))
            fault = f"step {i + 1} dropped"
            for n in sorted(chosen):
                out.append(LabelledStep(task.key, fault, task.goal, plan.steps, n, n not in failed, scores[n - 1]))
            break
    return out
