"""The rule book: each rule answered once, and every consumer reading it the same way.

The central test builds, for every item with more than one crafting recipe, a
one-step plan through each recipe (the inventory holds exactly that recipe's
ingredients) and asserts that the simulator, the validator and the verifier
all take the same recipe: the one :meth:`Rules.fitting_recipe` names.
"""

from __future__ import annotations

from collections import Counter

import pytest

from barsym.kb import CRAFTING_TABLE, Rules, UnknownProfileError, batches
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import Decomposition, check_decomposition
from barsym.sim import Code, Failure, Simulator, State


@pytest.fixture(scope="module")
def rules(kb):
    return Rules(kb)


def test_batches_are_whole_runs():
    assert [batches(n, 4) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_tool_tiers_and_tierless_tools(rules):
    assert rules.is_tool("stone_pickaxe", "pickaxe", 2) and not rules.is_tool("wooden_pickaxe", "pickaxe", 2)
    assert rules.is_tool("golden_pickaxe", "pickaxe", 1)  # golden counts as wooden
    assert rules.is_tool("shears", "shears", 5)  # a kind without tiers meets any tier
    assert rules.tools_for("shears", 0) == ["shears"]
    assert rules.tools_for("pickaxe", 3) == ["iron_pickaxe", "diamond_pickaxe", "netherite_pickaxe"]
    assert rules.lowest_tool("pickaxe", 1) == "golden_pickaxe"  # tier 1, first by name without a cost
    assert rules.lowest_tool("pickaxe", 1, cost={"golden_pickaxe": 9, "wooden_pickaxe": 1}.get) == "wooden_pickaxe"
    assert rules.compare_tools("wooden_pickaxe", "iron_pickaxe") == -1
    assert rules.compare_tools("golden_pickaxe", "wooden_pickaxe") == 0
    assert rules.compare_tools("shears", "shears") == 0
    with pytest.raises(ValueError):
        rules.compare_tools("shears", "iron_pickaxe")


def test_fuel_units_and_order(rules):
    assert rules.fuel_units("planks", 3) == 2 and rules.fuel_units("planks", 1.5) == 1
    assert rules.fuel_units("coal", 0) == 0
    held = {"coal": 1, "oak_planks": 4, "crafting_table": 1}
    fuel, burn = rules.pick_fuel(held, 3, reserve={})
    assert fuel == {"coal": 1} and burn == 8
    fuel, _ = rules.pick_fuel({"crafting_table": 1, "oak_planks": 1}, 3, reserve={"oak_planks": 1})
    assert fuel == {}  # the last table is never burned, reserved planks are not either


def test_unknown_profile_names_the_known_ones(kb):
    with pytest.raises(UnknownProfileError, match="crafting, durable, survival"):
        Rules(kb, "hardcore")


def _ingredients(kb, recipe) -> Counter:
    """One concrete item per slot (never a generic stand-in), enough for one run."""
    held: Counter = Counter()
    for ingredient in recipe.ingredients:
        concrete = [a for a in ingredient.accepts if a not in kb.generic]
        held[(concrete or list(ingredient.accepts))[0]] += ingredient.count
    return held


def _multi_recipe_items(kb):
    return sorted(item for item, recipes in kb.crafts.items() if len(recipes) > 1 and item not in kb.generic)


def test_simulator_validator_and_verifier_agree_on_every_recipe(kb, rules, validator):
    sim = Simulator(kb, rules)
    items = _multi_recipe_items(kb)
    assert len(items) >= 40
    checked = 0
    for item in items:
        for recipe in kb.crafts[item]:
            held = _ingredients(kb, recipe)
            if rules.needs_table(recipe):
                held[CRAFTING_TABLE] += 1
            fit = rules.fitting_recipe(item, recipe.count, held)
            assert fit is not None and fit.paid and not fit.station_missing, (item, recipe)
            # the simulator consumes exactly what the rule book's recipe takes
            step = Step(type=StepType.CRAFT, item=item, count=recipe.count)
            moved = sim.transition(step, State.start(dict(held)))
            assert not isinstance(moved, Failure), (item, moved)
            assert dict(moved.consumed) == fit.taken, (item, recipe)
            # the validator plays the same step to the same end
            result = validator.validate(Plan(steps=(step,)), start=State.start(dict(held)))
            assert result.valid and result.final_state == moved.state, item
            # the verifier reads the held items as subgoals and accepts them for that recipe
            subgoals = tuple(Goal(item=name, count=n) for name, n in held.items())
            d = Decomposition(step, subgoals, "test", yields=fit.batches * fit.recipe.count)
            problems = [
                p
                for p in check_decomposition(kb, Goal(item=item, count=recipe.count), d, rules)
                if "not needed" not in p
            ]  # a table for a 2x2 recipe is the verifier's waste note
            assert problems == [], (item, recipe, problems)
            checked += 1
    assert checked >= 90


def test_the_recipe_rule_prefers_a_paid_recipe_with_its_station(kb, rules):
    # sticks from planks (4 a run) or from bamboo (1 a run): the first paid recipe wins
    fit = rules.fitting_recipe("stick", 1, {"bamboo": 2})
    assert fit.paid and fit.recipe.ingredients[0].accepts == ("bamboo",)
    fit = rules.fitting_recipe("stick", 4, {"oak_planks": 2, "bamboo": 8})
    assert fit.paid and "oak_planks" in fit.recipe.ingredients[0].accepts
    # none paid: the one missing the fewest units, so the message is about the nearest way
    fit = rules.fitting_recipe("stick", 4, {"bamboo": 6})
    assert not fit.paid and fit.missing_units == 2
    # paid but no table: that recipe is chosen, and its missing station is what fails
    fit = rules.fitting_recipe("furnace", 1, {"cobblestone": 8})
    assert fit.paid and fit.station_missing
    moved = Simulator(kb, rules).transition(
        Step(type=StepType.CRAFT, item="furnace", count=1), State.start({"cobblestone": 8})
    )
    assert moved.code is Code.MISSING_STATION


def test_mixed_slots_take_any_mix(kb, rules):
    fit = rules.fitting_recipe("purpur_slab", 6, {"purpur_block": 2, "purpur_pillar": 1})
    assert fit.paid and fit.taken == {"purpur_block": 2, "purpur_pillar": 1}
