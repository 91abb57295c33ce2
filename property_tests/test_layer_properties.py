"""Hypothesis: from any start (inventory x layer 0-3, tools held or not) a plan wastes no step and names its tools.

Issue 56: from a start below the surface the planners dug down and climbed
straight back up, and a dig put in after a climb named no pickaxe. For the
symbolic planner and for ``bar`` with the ``copy-facts`` stand-in (the model
that answers with barsym's own facts), over :mod:`barsym.testing`'s states:

- the plan is valid from its start and the validator finds no redundant step
  (which includes a move the next move undoes with nothing needing its layer);
- every dig down and every mine or kill whose action needs a tool names it;
- when the start already holds every tool the plan's gathering and digging
  names and no gathering uses up an item, the plan makes the fewest moves that
  reach both the highest and the deepest layer its gathering needs (down first
  or up first, whichever is shorter).
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings

from barsym.kb import load_kb
from barsym.model import Goal, StepType
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.testing import goals, states
from barsym.validation import Validator

KB = load_kb()
VALIDATOR = Validator(KB)
RULES = VALIDATOR.rules
SYMBOLIC = make_planner("symbolic", KB)
BAR = make_planner("bar", KB, llm_stand_in="copy-facts", facts=True, log=False)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def untooled(plan) -> list[str]:
    """Steps that need a tool and name none."""
    out = []
    for step in plan.steps:
        if step.type is StepType.DIG_DOWN and not step.tool:
            out.append(str(step))
        elif step.type in (StepType.MINE, StepType.KILL) and not step.tool:
            action = RULES.action(step.type.value, KB.resolve(step.item or ""), step.count)
            if action.tool is not None:
                out.append(str(step))
    return out


def digs_after_a_climb(plan) -> int:
    kinds = [s.type for s in plan.steps if s.type.moves]
    if StepType.CLIMB_UP not in kinds:
        return 0
    return kinds[kinds.index(StepType.CLIMB_UP) :].count(StepType.DIG_DOWN)


def fewest_moves(plan, layer: int) -> int | None:
    """The fewest layer moves that visit every gathering step's layers from ``layer`` (None: not judged here)."""
    top = deep = layer
    for step in plan.steps:
        found = RULES.step_layers(step)
        if found is None:
            continue
        if RULES.action(step.type.value, KB.resolve(step.item or ""), step.count).needs:
            return None  # it uses up an item (a bucket): its place depends on a craft
        top, deep = min(top, max(found)), max(deep, min(found))
    return (deep - top) + min(deep - layer, layer - top)


def check(planner, goal: Goal, start: State) -> None:
    try:
        result = planner.plan(goal, start)
    except PlanningError as exc:
        assert exc.kind.about_goal, exc.message
        return
    plan, where = result.plan, (goal, start.describe())
    check = VALIDATOR.validate(plan, goal=goal, start=start)
    shown = [str(s) for s in plan.steps]
    assert check.valid, (where, shown, check.failure())
    wasted = [w.message for w in check.warnings if w.code == "redundant_step"]
    assert not wasted, (where, shown, wasted)
    assert not untooled(plan), (where, shown, untooled(plan))
    tools = {s.tool for s in plan.steps if s.tool and (s.type.moves or s.type in (StepType.MINE, StepType.KILL))}
    fewest = fewest_moves(plan, start.layer)
    if fewest is not None and all(start.count(tool) for tool in tools):
        assert sum(s.type.moves for s in plan.steps) == fewest, (where, shown, fewest)


ISSUE_START = State.start({"stone_pickaxe": 1}, 1)


@SETTINGS
@given(goals(), states(max_layer=3))
@example(Goal(item="iron_pickaxe"), ISSUE_START)
@example(Goal(item="iron_pickaxe"), State.start({"stone_pickaxe": 1}, 2))
@example(Goal(item="diamond_pickaxe"), State.start({"stone_pickaxe": 12, "furnace": 2, "planks": 7}, 1))
def test_symbolic_plans_waste_no_step_and_name_their_tools(goal, start):
    check(SYMBOLIC, goal, start)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(goals(), states(max_layer=3))
@example(Goal(item="iron_pickaxe"), ISSUE_START)
@example(Goal(item="golden_pickaxe", count=2), State.start({"cobblestone": 9, "diamond_pickaxe": 12, "stick": 13}, 1))
def test_bar_with_copy_facts_plans_waste_no_step_and_name_their_tools(goal, start):
    check(BAR, goal, start)


def test_the_issue_plan_digs_first_and_never_climbs_back_for_nothing():
    """``barsym plan iron_pickaxe --planner symbolic --start stone_pickaxe=1 --layer 1``: iron first, then up."""
    for planner in (SYMBOLIC, BAR):
        plan = planner.plan(Goal(item="iron_pickaxe"), ISSUE_START).plan
        shown = [str(s) for s in plan.steps]
        assert shown[:3] == [
            "mine 8 cobblestone with stone_pickaxe",
            "dig down with stone_pickaxe",
            "mine 3 iron_ore with stone_pickaxe",
        ], shown
        assert digs_after_a_climb(plan) == 0 and shown.count("climb up") == 2, shown
        assert VALIDATOR.validate(plan, goal=Goal(item="iron_pickaxe"), start=ISSUE_START).verdict.value == "valid"
