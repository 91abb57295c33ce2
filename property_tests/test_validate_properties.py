"""Hypothesis: the validator names every independent mistake of a plan in one run, knock-ons marked as such.

Issue 56: a plan missing its dig down before iron and short of sticks was
reported invalid for the dig alone; the stick shortage hid behind it as a
"knock-on failure" and appeared only after the first fix. Here two faults are
put far apart into a valid plan (a step dropped or its count cut), each of
which alone makes the plan invalid: validating the plan with both names the
first mistake of each (same step, code and item) among its independent errors
(``caused_by`` None).
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal, Plan
from barsym.testing import goals, plans
from barsym.validation import Validator

KB = load_kb()
VALIDATOR = Validator(KB)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
DEEP = (
    "iron_pickaxe",
    "bucket",
    "shears",
    "compass",
    "clock",
    "diamond_pickaxe",
    "piston",
    "golden_pickaxe",
    "jukebox",
)


def faulted(plan: Plan, faults: dict[int, str]) -> tuple[Plan, list[int]]:
    """``plan`` with its steps at the given positions dropped or their counts cut, and each new step's old position."""
    steps, where = [], []
    for i, step in enumerate(plan.steps):
        fault = faults.get(i)
        if fault == "drop":
            continue
        if fault == "cut":
            step = step.model_copy(update={"count": max(1, (step.count or 1) // 2)})
        steps.append(step)
        where.append(i)
    return Plan(steps=tuple(steps)), where


def independent(plan: Plan, where: list[int], goal: Goal) -> list[tuple]:
    """The independent errors as (old position or 'end', code, item)."""
    check = VALIDATOR.validate(plan, goal=goal)
    return [(where[e.step - 1] if e.step else "end", e.code, e.item) for e in check.errors if e.caused_by is None]


@st.composite
def two_faults(draw):
    plan = draw(plans(goals(DEEP, max_count=1)))
    n = len(plan.steps)
    assume(n >= 9)
    a = draw(st.integers(0, n // 3 - 1))
    b = draw(st.integers(2 * n // 3, n - 1))
    kinds = ["drop", "cut"]
    fa = draw(st.sampled_from(kinds if (plan.steps[a].count or 1) > 1 else ["drop"]))
    fb = draw(st.sampled_from(kinds if (plan.steps[b].count or 1) > 1 else ["drop"]))
    return plan, (a, fa), (b, fb)


@SETTINGS
@given(two_faults())
def test_two_faults_far_apart_are_both_named(case):
    plan, (a, fa), (b, fb) = case
    goal = plan.default_goal()
    assert goal is not None
    only_a = independent(*faulted(plan, {a: fa}), goal)
    only_b = independent(*faulted(plan, {b: fb}), goal)
    assume(only_a and only_b)  # each fault alone breaks the plan
    first_a, first_b = only_a[0], only_b[0]
    assume(first_a[0] == "end" or first_a[0] < b)  # far apart: the first fault shows before the second is made
    both = independent(*faulted(plan, {a: fa, b: fb}), goal)
    shown = [str(s) for s in plan.steps]
    assert first_a in both, (shown, (a, fa), (b, fb), first_a, both)
    assert first_b in both, (shown, (a, fa), (b, fb), first_b, both)


def test_the_issue_plan_names_the_missing_dig_and_the_sticks_in_one_run():
    """iron_pickaxe without its dig down to the iron and with one stick craft too few: both are named."""
    from barsym.planner import make_planner

    plan = make_planner("symbolic", KB).plan(Goal(item="iron_pickaxe")).plan
    steps = [s for s in plan.steps if not (s.type.value == "dig_down" and s.tool == "stone_pickaxe")]
    steps = [s.model_copy(update={"count": 1}) if s.item == "stick" else s for s in steps]
    check = VALIDATOR.validate(Plan(steps=tuple(steps)), goal=Goal(item="iron_pickaxe"))
    roots = [(e.code, e.item) for e in check.errors if e.caused_by is None]
    assert roots == [("wrong_layer", "iron_ore"), ("missing_ingredient", "stick")], check.errors
    knock_ons = [e for e in check.errors if e.caused_by is not None]
    assert knock_ons and all(e.item in ("iron_ore", "iron_ingot") for e in knock_ons)
    text = check.to_text(Plan(steps=tuple(steps)))
    assert "needs 2 stick, only 0 at hand" in text and "dig down first" in text
