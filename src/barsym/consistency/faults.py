"""One fault put into a plan, for checking a repairer: the four fault classes of BAR's module (b).

Why here: the repair tests, ``bench/bench_repair_faults.py``, the labelled step
set (:mod:`barsym.consistency.step_set`) and the step-verdict training data of
``barsym distill`` (:mod:`barsym.distill.verdicts`) must inject the same
faults, or a benchmark would measure other cases than the tests check and the
training shows. (It lives below ``distill`` in the layers; ``barsym.testing.faults``
re-exports it.)
Each class applies wherever the plan allows it: every dig down dropped (one at
a time), the crafting table moved to just after its first use, every furnace
dropped, every count above one cut in half (layer moves have no count).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ..model import Plan, Step, StepType
from ..validation import Validator

__all__ = ["InjectedFault", "moved_before_needs", "repair_faults"]


class InjectedFault(NamedTuple):
    kind: str  # the fault class, for grouping
    where: str  # what exactly was done, for messages
    steps: list[Step]


def repair_faults(plan: Plan, validator: Validator) -> Iterator[InjectedFault]:
    """Every single-fault variant of ``plan`` (some may still be valid: spare units can cover a cut)."""
    s = list(plan.steps)
    for i, step in enumerate(s):
        if step.type is StepType.DIG_DOWN:
            yield InjectedFault("dropped dig down", f"dig down at step {i + 1} dropped", s[:i] + s[i + 1 :])
    table = next((i for i, step in enumerate(s) if step.item == "crafting_table"), None)
    if table is not None:
        rest = s[:table] + s[table + 1 :]
        first_use = next(
            (
                j
                for j in range(table, len(rest))
                if not validator.validate(Plan(steps=tuple(rest[: j + 1])), goal=None).valid
            ),
            None,
        )
        if first_use is not None:
            yield InjectedFault(
                "table moved after first use",
                "crafting table moved after its first use",
                rest[: first_use + 1] + [s[table]] + rest[first_use + 1 :],
            )
    for i, step in enumerate(s):
        if step.item == "furnace":
            yield InjectedFault("dropped furnace", f"furnace at step {i + 1} dropped", s[:i] + s[i + 1 :])
    for i, step in enumerate(s):
        if step.count and step.count > 1 and not step.type.moves:
            yield InjectedFault(
                "count cut in half",
                f"count of step {i + 1} cut to {step.count // 2}",
                s[:i] + [step.model_copy(update={"count": step.count // 2})] + s[i + 1 :],
            )


def moved_before_needs(steps: list[Step]) -> list[Step] | None:
    """The plan with its last craft moved to the front (it then comes before what it needs), or None."""
    crafts = [i for i, step in enumerate(steps) if step.type is StepType.CRAFT]
    if not crafts or crafts[-1] == 0:
        return None
    last = crafts[-1]
    return [steps[last]] + steps[:last] + steps[last + 1 :]
