"""Hypothesis properties of planning from a start state, under both rule profiles.

From any start inventory and layer, a plan the planner returns validates from
that start; an error is always an answer about the goal, never a broken plan;
and holding more never turns a possible goal impossible.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.validation import Validator

KB = load_kb()
SURVIVAL = make_planner("symbolic", KB)
CRAFTING = make_planner("symbolic", KB, rules="crafting")
VALIDATE = {"survival": Validator(KB), "crafting": Validator(KB, "crafting")}
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GOALS = [
    "stick",
    "torch",
    "furnace",
    "iron_pickaxe",
    "bucket",
    "diamond_sword",
    "chest",
    "hopper",
    "rail",
    "cake",
    "golden_apple",
    "redstone_torch",
    "shears",
    "piston",
    "oak_boat",
    "bread",
    "book",
    "compass",
]
HELD = [
    "logs",
    "oak_log",
    "oak_planks",
    "planks",
    "stick",
    "cobblestone",
    "coal",
    "charcoal",
    "iron_ore",
    "iron_ingot",
    "gold_ingot",
    "redstone",
    "diamond",
    "crafting_table",
    "furnace",
    "wooden_pickaxe",
    "stone_pickaxe",
    "iron_pickaxe",
    "bucket",
    "sand",
    "paper",
    "leather",
    "wheat",
    "sugar",
    "egg",
    "milk_bucket",
    "apple",
    "string",
    "feather",
    "glass",
]

inventories = st.dictionaries(st.sampled_from(HELD), st.integers(1, 12), max_size=8)
starts = st.builds(lambda inv, layer: State.start(inv, layer), inventories, st.integers(0, KB.deepest_layer))
goals = st.builds(lambda item, n: Goal(item=item, count=n), st.sampled_from(GOALS), st.integers(1, 3))


def _plan(planner, goal, start):
    try:
        return planner.plan(goal, start)
    except PlanningError as exc:
        assert exc.kind.about_goal, exc.message  # "cannot be had", never a plan barsym could not check
        return None


@SETTINGS
@given(goals, starts)
def test_survival_plans_validate_from_their_start(goal, start):
    result = _plan(SURVIVAL, goal, start)
    if result is not None:
        check = VALIDATE["survival"].validate(result.plan, goal=goal, start=start)
        assert check.valid, (goal, start, check.errors[:1])


@SETTINGS
@given(goals, inventories)
def test_crafting_plans_validate_and_more_items_never_hurt(goal, held):
    start = State.start(held)
    result = _plan(CRAFTING, goal, start)
    if result is not None:
        assert VALIDATE["crafting"].validate(result.plan, goal=goal, start=start).valid
        richer = State.start({name: n + 2 for name, n in held.items()} | {"stick": 5})
        assert _plan(CRAFTING, goal, richer) is not None, (goal, held)


@SETTINGS
@given(goals, inventories, inventories)
def test_survival_more_items_never_make_a_goal_impossible(goal, held, extra):
    if _plan(SURVIVAL, goal, State.start(held)) is None:
        return
    merged = dict(held)
    for name, n in extra.items():
        merged[name] = merged.get(name, 0) + n
    assert _plan(SURVIVAL, goal, State.start(merged)) is not None, (goal, held, extra)
