"""Simulator semantics: batches, grid size, stations, fuel, tools and layers."""

from __future__ import annotations

import pytest

from barsym.model import Step, StepType
from barsym.sim import Code, Simulator, State, StepFailed


@pytest.fixture(scope="module")
def sim(kb):
    return Simulator(kb)


def craft(item, n):
    return Step(type=StepType.CRAFT, item=item, count=n)


def mine(item, n, tool=None):
    return Step(type=StepType.MINE, item=item, count=n, tool=tool)


DIG = Step(type=StepType.DIG_DOWN)


def test_crafting_runs_whole_batches(sim):
    state = sim.apply(craft("stick", 7), State.start({"planks": 4}))
    assert state.count("stick") == 8 and state.count("planks") == 0


def test_missing_ingredient_reports_need_and_have(sim):
    outcome = sim.transition(craft("stick", 7), State.start({"planks": 3}))
    assert outcome.code is Code.MISSING_INGREDIENT and outcome.needed == 4 and outcome.had == 3


def test_three_by_three_needs_a_table(sim):
    start = State.start({"planks": 3, "stick": 2})
    assert sim.transition(craft("wooden_pickaxe", 1), start).code is Code.MISSING_STATION
    assert sim.apply(craft("wooden_pickaxe", 1), start.changed(add={"crafting_table": 1})).count("wooden_pickaxe") == 1


def test_generic_items_stand_in_for_members(sim):
    state = sim.apply(craft("oak_stairs", 4), State.start({"planks": 6, "crafting_table": 1}))
    assert state.count("oak_stairs") == 4


def test_smelting_needs_furnace_and_real_fuel(sim):
    base = {"iron_ore": 3, "furnace": 1}
    assert (
        sim.transition(
            Step(type=StepType.SMELT, item="iron_ingot", count=3), State.start({"iron_ore": 3, "planks": 2})
        ).code
        is Code.MISSING_STATION
    )
    one_plank = sim.transition(
        Step(type=StepType.SMELT, item="iron_ingot", count=3), State.start({**base, "planks": 1})
    )
    assert one_plank.code is Code.INSUFFICIENT_FUEL and one_plank.had == 1.5
    done = sim.apply(Step(type=StepType.SMELT, item="iron_ingot", count=3), State.start({**base, "planks": 2}))
    assert done.count("iron_ingot") == 3 and done.count("planks") == 0
    sticks = sim.apply(Step(type=StepType.SMELT, item="iron_ingot", count=1), State.start({**base, "stick": 2}))
    assert sticks.count("stick") == 0 and sticks.count("iron_ingot") == 1


def test_fuel_spares_what_later_steps_need(sim):
    start = State.start({"iron_ore": 1, "furnace": 1, "planks": 9, "coal": 1})
    state = sim.apply(Step(type=StepType.SMELT, item="iron_ingot", count=1), start, reserve={"planks": 8})
    assert state.count("coal") == 0 and state.count("planks") == 9
    starved = sim.transition(
        Step(type=StepType.SMELT, item="iron_ingot", count=3),
        State.start({"iron_ore": 3, "furnace": 1, "planks": 9}),
        reserve={"planks": 8},
    )
    assert starved.code is Code.INSUFFICIENT_FUEL and "needed by later steps" in starved.message


def test_mining_checks_layer_and_tier(sim):
    surface = State.start({"wooden_pickaxe": 1})
    assert sim.transition(mine("cobblestone", 1), surface).code is Code.WRONG_LAYER
    below = sim.apply(DIG, surface)
    assert below.layer == 1 and sim.apply(mine("cobblestone", 3), below).count("cobblestone") == 3
    assert sim.transition(mine("logs", 1), below).code is Code.WRONG_LAYER
    deep = State.start({"wooden_pickaxe": 1}, layer=2)
    low = sim.transition(mine("iron_ore", 1, "wooden_pickaxe"), deep)
    assert low.code is Code.TOOL_TIER_TOO_LOW and low.needed == 2 and low.had == 1
    assert sim.transition(mine("iron_ore", 1), deep).code is Code.TOOL_TIER_TOO_LOW
    assert sim.transition(mine("iron_ore", 1, "stone_pickaxe"), deep).code is Code.MISSING_TOOL


def test_dig_down_needs_a_pickaxe(sim):
    assert sim.transition(DIG, State()).code is Code.MISSING_TOOL
    deepest = State.start({"wooden_pickaxe": 1}, layer=3)
    assert sim.transition(DIG, deepest).notes  # a no-op the validator reports as redundant


def test_unknown_names_and_wrong_actions(sim):
    unknown = sim.transition(craft("stik", 1), State.start({"planks": 2}))
    assert unknown.code is Code.UNKNOWN_ITEM and "stick" in unknown.suggestions
    wrong = sim.transition(mine("stick", 1), State())
    assert wrong.code is Code.NOT_OBTAINABLE and "craft" in wrong.message
    assert sim.transition(Step(type=StepType.KILL, item="leather", count=2), State()).state.count("leather") == 2


def test_apply_is_pure_and_raises_on_failure(sim):
    start = State.start({"planks": 4})
    before = start.inventory
    sim.apply(craft("stick", 4), start)
    assert start.inventory == before
    with pytest.raises(StepFailed) as info:
        sim.apply(craft("stick", 40), start)
    assert info.value.failure.code is Code.MISSING_INGREDIENT
