"""Hypothesis: a repair is no larger than the fault, wherever a valid plan that close exists.

Issue 56: a 5-step wooden_pickaxe plan with one bogus step (``craft 1 clock``)
came back 20 steps long, the clock still unmade. :func:`barsym.testing.faulty_plans`
puts one step in, takes one out or changes one; the plan it started from is
valid and one edit away, so the symbolic repair must be one edit too (a step
deleted, inserted or changed: edit distance at most 1) and valid, and a plan the
fault left valid comes back unchanged.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from barsym.bar_io import parse_plan
from barsym.consistency import StateConsistency
from barsym.consistency.report import repair_text
from barsym.kb import load_kb
from barsym.metrics import as_records, edit_distance
from barsym.model import Goal, Plan, Step
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.testing import faulty_plans, goals, plans, states
from barsym.validation import Validator

KB = load_kb()
VALIDATOR = Validator(KB)
REPAIR = StateConsistency(KB)
PLANNER = make_planner("symbolic", KB)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
ONE_EDIT = ("drop", "insert", "change", "cut")


def distance(a: tuple[Step, ...], b: tuple[Step, ...]) -> int:
    """Edit distance between two plans, step by step (deleting, inserting or changing a step costs 1)."""
    return edit_distance(as_records(a), as_records(b))


def check_minimal(faulty: Plan, what: str, goal: Goal, start: State | None = None) -> None:
    """The repair of a plan one edit from a valid one: valid, and at most one edit from the plan given it."""
    before = VALIDATOR.validate(faulty, goal=goal, start=start)
    result = REPAIR.repair(faulty, goal=goal, start=start)
    shown = ([str(s) for s in faulty.steps], what, [str(s) for s in result.plan.steps])
    if before.valid:
        assert result.plan.steps == faulty.steps, shown
        return
    assert result.valid_after, (shown, result.after.failure())
    assert distance(faulty.steps, result.plan.steps) <= 1, shown


@SETTINGS
@given(plans(goals()), st.data())
def test_a_one_step_fault_is_repaired_by_at_most_one_step(plan, data):
    faulty, what = data.draw(faulty_plans(st.just(plan), faults=ONE_EDIT))
    check_minimal(faulty, what, plan.default_goal())


@SETTINGS
@given(goals(), states(max_layer=3), st.data())
def test_the_same_from_any_start(goal, start, data):
    """Held items and a start below the surface (layer 0-3): the plan the fault broke is still one edit away."""
    try:
        plan = PLANNER.plan(goal, start).plan
    except PlanningError:
        assume(False)
    faulty, what = data.draw(faulty_plans(st.just(plan), faults=ONE_EDIT))
    check_minimal(faulty, what, goal, start)


def test_the_issue_clock_plan_is_repaired_by_deleting_the_clock():
    """The issue's 5-step wooden_pickaxe plan with a bogus ``craft 1 clock``: one step deleted, nothing else."""
    text = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 clock\ncraft 1 crafting_table\ncraft 1 wooden_pickaxe\n"
    steps = parse_plan(text).steps
    result = REPAIR.repair(Plan(steps=steps))
    assert result.plan.steps == steps[:3] + steps[4:]
    assert result.after.verdict.value == "valid" and result.edit == "delete step 4 (craft 1 clock)"
    assert not result.rounds and result.to_dict()["edit"] == result.edit
    text = repair_text("clock.txt", result)
    assert "the smallest repair: delete step 4 (craft 1 clock)" in text and "5 kept, 1 removed" in text


def test_a_bogus_step_that_starves_an_earlier_smelt_is_changed_back():
    """Found by the first test: gold_ingot's plan with its ``mine 1 gold_ore`` changed to ``craft 1 chest``.

    The chest holds back 8 planks the iron smelt would burn, so the smelt fails and no iron pickaxe is made; the
    repair once fetched fuel again (climbs, logs, planks, dig-downs: 10 edits). One change restores the plan."""
    plan = PLANNER.plan(Goal(item="gold_ingot", count=1)).plan
    at = next(i for i, s in enumerate(plan.steps) if s.item == "gold_ore")
    faulty = Plan(steps=plan.steps[:at] + parse_plan("craft 1 chest\n").steps + plan.steps[at + 1 :])
    assert VALIDATOR.validate(faulty, goal=plan.default_goal()).failed_step < at + 1  # an earlier step fails
    result = REPAIR.repair(faulty, goal=plan.default_goal())
    assert result.plan.steps == plan.steps, [str(s) for s in result.plan.steps]
    assert result.edit == f"change step {at + 1} (craft 1 chest) to {plan.steps[at]}"


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,  # valid, but two edits from the plan given
    reason="known bug, found by Hypothesis 2026-12-08: the one-step search inserts `mine 1 logs` (the craft's "
    "shortfall) but not `mine 2 logs` (one more for the planks a later smelt burns), so the rounds repair "
    "it with two edits (logs inserted, planks recounted)",
)
def test_a_dropped_logs_step_from_a_start_with_a_table_is_put_back_in_one_edit():
    goal, start = Goal(item="redstone", count=1), State.start({"crafting_table": 1, "logs": 1}, 0)
    plan = PLANNER.plan(goal, start).plan
    assert str(plan.steps[0]) == "mine 2 logs"
    check_minimal(Plan(steps=plan.steps[1:]), "drop step 1", goal, start)
