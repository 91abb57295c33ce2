"""Respecting tool durability: top up a tool before the step where it wears out.

Under a rule profile with ``durability`` (``--rules durable``) the validator
calls a plan invalid when a tool is used beyond the uses of the copies held
(:mod:`barsym.sim.wear`: the deterministic world's expected wear against
minecraft-data's ``maxDurability``). The deterministic simulator itself never
breaks a tool (BAR's plans rely on that), so the forward repair sees no failing
step there; this pass does the rest: at the first step where a tool wears out,
the symbolic planner plans the missing copies from the state before that step
(keeping what the later steps need), and the steps go in just before it. It
repeats while that helps, so a plan digging to layer 2 and mining with one
wooden pickaxe gets a second pickaxe before the step that would break the first.

The repairer runs it after its rounds; the planners respect durability through
the repairer (``make_planner`` follows every planner with state consistency
under such a profile).
"""

from __future__ import annotations

from ..model import Goal, Plan, Step
from ..sim import State
from ..sim.wear import CODE
from ..validation import ValidationResult, Validator
from .needs import Need, NeedPlanner

#: how many tool top-ups one repair may make (each fixes the first wear-out; a plan rarely needs more than two)
MAX_TOP_UPS = 6


def worn_only(validation: ValidationResult) -> bool:
    """Whether every error is a tool worn out (the plan runs otherwise)."""
    return bool(validation.errors) and all(e.code == CODE for e in validation.errors)


def top_up_tools(
    needs: NeedPlanner,
    validator: Validator,
    steps: list[Step],
    labels: list,
    label,
    goal: Goal | None,
    start: State,
    source: str | None = None,
) -> tuple[list[Step], list, ValidationResult]:
    """Insert the tool copies a plan lacks; returns the steps, their labels (``label`` for new ones) and the verdict."""
    validation = validator.validate(Plan(steps=tuple(steps), source=source), goal=goal, start=start)
    for _ in range(MAX_TOP_UPS):
        if not worn_only(validation):
            break
        worn = validation.errors[0]
        at = (worn.step or 1) - 1
        before = validation.state_before(at + 1)
        tool, more = worn.item or "", worn.count or 1
        extra = needs.steps_for(Need(tool, before.count(tool) + more, reason=worn.message), before, steps[at:])
        if not extra:
            break
        new_steps = steps[:at] + list(extra) + steps[at:]
        new_labels = labels[:at] + [label] * len(extra) + labels[at:]
        checked = validator.validate(Plan(steps=tuple(new_steps), source=source), goal=goal, start=start)
        if checked.errors and not worn_only(checked):
            break  # the copies broke something else: keep the plan as it was
        steps, labels, validation = new_steps, new_labels, checked
    return steps, labels, validation
