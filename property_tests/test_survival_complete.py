"""Hypothesis: under the survival rules (the default) the planner is complete and monotone from any start.

Issue 56 asks this of both rule sets; ``test_crafting_complete.py`` checks
Plancraft's. Here the start is drawn from :mod:`barsym.testing` (held items,
tools held or not, layer 0-3):

- **complete**: a plan drawn step by step among the gathering, digging,
  climbing, crafting and smelting steps that run there (so the validator
  accepts it) makes its last item; the planner must plan that goal from that
  start;
- **monotone**: adding items to a start the planner plans from (any layer)
  never turns the goal impossible.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal, Step, StepType
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.testing import goals, inventories, runnable_plans, states
from barsym.testing.strategies import TECH_TREE
from barsym.validation import Validator

KB = load_kb()
PLANNER = make_planner("symbolic", KB)
VALIDATOR = Validator(KB)
RULES = VALIDATOR.rules
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: the items a drawn plan makes: the tech tree and what it is made of
VOCABULARY = tuple(
    dict.fromkeys(KB.resolve(name) for name in TECH_TREE + ("logs", "cobblestone", "iron_ore", "coal", "gold_ore"))
)


def planned(goal: Goal, start: State):
    try:
        return PLANNER.plan(goal, start)
    except PlanningError as exc:
        assert exc.kind.about_goal, exc.message  # an answer about the goal, never a plan barsym could not check
        return None


def candidates(state: State) -> list[Step]:
    """One step per way of making each vocabulary item (one unit, the best tool held), a dig and a climb."""
    out = [Step(type=StepType.CLIMB_UP)]
    dig = RULES.best_held_tool(KB.dig_down_kind, RULES.dig_tier, state.count)
    if dig is not None:
        out.append(Step(type=StepType.DIG_DOWN, tool=dig))
    for item in VOCABULARY:
        for action in RULES.ways(item):
            tool = None
            if action.tool is not None:
                tool = RULES.best_held_tool(action.tool.kind, action.tool.tier, state.count)
                if tool is None:
                    continue
            out.append(Step(type=StepType(action.kind), item=item, count=1, tool=tool))
    return out


@SETTINGS
@given(states(max_layer=3), st.data())
def test_whenever_a_drawn_plan_validates_the_planner_plans(start, data):
    plan, state = data.draw(runnable_plans(start, candidates))
    steps = plan.steps
    made = [s for s in steps if not s.type.moves]
    assume(made)
    item = KB.resolve(made[-1].item or "")
    goal = Goal(item=item, count=max(1, min(state.count_any(KB.acceptable(item)), 64)))
    shown = (goal, start.describe(), [str(s) for s in steps])
    assert VALIDATOR.validate(plan, goal=goal, start=start).valid, shown
    result = planned(goal, start)
    assert result is not None, shown
    assert VALIDATOR.validate(result.plan, goal=goal, start=start).valid, shown


@SETTINGS
@given(goals(), states(max_layer=3), inventories(max_kinds=3))
def test_more_items_never_turn_a_planned_goal_impossible_from_any_layer(goal, start, extra):
    assume(planned(goal, start) is not None)
    richer = dict(start.counts)
    for name, n in extra.items():
        richer[name] = richer.get(name, 0) + n
    assert planned(goal, State.start(richer, start.layer)) is not None, (goal, start.describe(), extra)
