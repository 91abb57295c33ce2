"""Fault-injected variants of BAR's expert plans: the faults of test_validate_faults.py, as plans.

test_validate_faults.py checks that the validator names each fault at the
right step; the execution-world tests need the same plans to check that the
deterministic world agrees with the validator on every one of them.
"""

from __future__ import annotations

import math

from barsym.model import Plan, Step, StepType


def _with(plan: Plan, steps, label: str) -> tuple[str, Plan]:
    return label, Plan(steps=tuple(steps), source=f"{plan.source} [{label}]")


def _replace(plan: Plan, index: int, **update) -> tuple[Step, ...]:
    return plan.steps[:index] + (plan.steps[index].model_copy(update=update),) + plan.steps[index + 1 :]


def faults(plan: Plan):
    """(label, plan) for every fault the plan admits; most make it invalid, some only wasteful."""
    steps = plan.steps
    for index, step in enumerate(steps):
        if step.type is StepType.DIG_DOWN:
            yield _with(plan, steps[:index] + steps[index + 1 :], f"no dig down {index + 1}")
        if step.type is StepType.MINE and step.tool in ("stone_pickaxe", "iron_pickaxe"):
            lower = "wooden_pickaxe" if step.tool == "stone_pickaxe" else "stone_pickaxe"
            yield _with(plan, _replace(plan, index, tool=lower), f"tier {index + 1}")
        if step.item == "crafting_table":
            yield _with(plan, steps[:index] + steps[index + 1 :], "no crafting table")
        if step.item == "logs" and step.count > 1:
            yield _with(plan, _replace(plan, index, count=step.count - 1), "one log fewer")
        if step.item in ("iron_ore", "gold_ore"):
            cut = _replace(plan, index, count=step.count - 1) if step.count > 1 else steps[:index] + steps[index + 1 :]
            yield _with(plan, cut, f"less {step.item}")
        if step.item == "stick":
            yield _with(plan, _replace(plan, index, item="stik"), "misspelt stick")
    digs = [i for i, s in enumerate(steps) if s.type is StepType.DIG_DOWN]
    if digs:
        logs = Step(type=StepType.MINE, item="logs", count=1)
        yield _with(plan, steps[: digs[0] + 1] + (logs,) + steps[digs[0] + 1 :], "logs underground")
    smelts = [i for i, s in enumerate(steps) if s.type is StepType.SMELT]
    planks = next((i for i, s in enumerate(steps) if s.item == "planks"), None)
    logs_at = next((i for i, s in enumerate(steps) if s.item == "logs"), None)
    if smelts and planks is not None and logs_at is not None:
        fuel = sum(math.ceil(steps[i].count / 1.5) for i in smelts)
        charcoal = sum(steps[i].count for i in smelts if steps[i].item == "charcoal")
        left = steps[planks].count - fuel
        if left >= 1:
            cut = list(steps)
            cut[planks] = cut[planks].model_copy(update={"count": left})
            cut[logs_at] = cut[logs_at].model_copy(update={"count": max(1, math.ceil(left / 4) + charcoal)})
            yield _with(plan, cut, "no fuel")
    yield _with(plan, steps[:-1], "last step dropped")
    extra = (Step(type=StepType.KILL, item="leather", count=2),) + steps + (Step(type=StepType.DIG_DOWN),)
    yield _with(plan, extra, "waste")
