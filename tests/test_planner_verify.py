"""check_decomposition: the oracle an LLM decomposer's answers are checked against."""

from __future__ import annotations

import pytest

from barsym.model import Goal, Step, StepType
from barsym.planner import (
    Decomposition,
    PlanContext,
    SymbolicDecomposer,
    check_decomposition,
    layer_goal,
    subgoal_roles,
)


def craft(item, n=1):
    return Step(type=StepType.CRAFT, item=item, count=n)


def g(item, n=1):
    return Goal(item=item, count=n)


@pytest.fixture(scope="module")
def symbolic(kb):
    return SymbolicDecomposer(kb)


def test_symbolic_answers_pass(kb, symbolic):
    context = PlanContext(kb, g("diamond_pickaxe"))
    for goal in (g("diamond_pickaxe"), g("iron_ingot", 3), g("diamond", 3), layer_goal(3), g("stick", 8), g("logs", 4)):
        assert check_decomposition(kb, goal, symbolic.decompose(goal, context)) == []


def test_good_hand_written_answer(kb):
    d = Decomposition(craft("iron_pickaxe"), [g("iron_ingot", 3), g("stick", 2), g("crafting_table")], "llm")
    assert check_decomposition(kb, g("iron_pickaxe"), d) == []
    assert subgoal_roles(kb, d.step, d.subgoals) == ["ingredient", "ingredient", "station"]


@pytest.mark.parametrize(
    "subgoals, expected",
    [
        ([g("iron_ingot", 3), g("crafting_table")], "missing ingredient"),
        ([g("iron_ingot", 2), g("stick", 2), g("crafting_table")], "missing ingredient"),
        ([g("iron_ingot", 3), g("stick", 2)], "missing station"),
        ([g("iron_ingot", 3), g("stick", 2), g("crafting_table"), g("diamond")], "not needed"),
        ([g("iron_ingot", 3), g("stick", 2), g("crafting_table"), g("unobtainium")], "unknown item"),
    ],
)
def test_craft_problems(kb, subgoals, expected):
    problems = check_decomposition(kb, g("iron_pickaxe"), Decomposition(craft("iron_pickaxe"), subgoals, "llm"))
    assert any(expected in p for p in problems), problems


def test_wrong_item_and_count(kb):
    d = Decomposition(craft("stone_pickaxe"), [g("cobblestone", 3), g("stick", 2), g("crafting_table")], "llm")
    assert any("makes stone_pickaxe, not iron_pickaxe" in p for p in check_decomposition(kb, g("iron_pickaxe"), d))
    d = Decomposition(craft("stick", 8), [g("planks", 4)], "llm")
    assert any("wrong count" in p for p in check_decomposition(kb, g("stick", 4), d))
    d = Decomposition(Step(type=StepType.MINE, item="iron_ingot", count=1), [], "llm")
    assert any("cannot be obtained by 'mine'" in p for p in check_decomposition(kb, g("iron_ingot"), d))


def test_smelt_needs_input_furnace_and_fuel(kb):
    smelt = Step(type=StepType.SMELT, item="iron_ingot", count=3)
    assert (
        check_decomposition(
            kb, g("iron_ingot", 3), Decomposition(smelt, [g("iron_ore", 3), g("planks", 2), g("furnace")])
        )
        == []
    )
    problems = check_decomposition(kb, g("iron_ingot", 3), Decomposition(smelt, [g("iron_ore", 3), g("planks", 1)]))
    assert any("missing station" in p for p in problems) and any("missing fuel" in p for p in problems)
    credited = Decomposition(smelt, [g("iron_ore", 3), g("planks", 1), g("furnace")], fuel_credit=1.5)
    assert check_decomposition(kb, g("iron_ingot", 3), credited) == []


def test_mining_needs_tool_tier_and_layer(kb):
    mine = Step(type=StepType.MINE, item="diamond", count=1, tool="stone_pickaxe")
    problems = check_decomposition(kb, g("diamond"), Decomposition(mine, [g("stone_pickaxe")]))
    assert any("missing tool" in p for p in problems) and any("wrong tool" in p for p in problems)
    assert any("missing layer" in p for p in problems)
    ok = Step(type=StepType.MINE, item="diamond", count=1, tool="iron_pickaxe")
    assert check_decomposition(kb, g("diamond"), Decomposition(ok, [g("iron_pickaxe"), layer_goal(3)])) == []


def test_dig_down_checks(kb):
    dig = Step(type=StepType.DIG_DOWN, tool="stone_pickaxe")
    assert check_decomposition(kb, layer_goal(2), Decomposition(dig, [g("stone_pickaxe"), layer_goal(1)])) == []
    problems = check_decomposition(kb, layer_goal(2), Decomposition(dig, [g("stone_pickaxe")]))
    assert any("layer:1 is missing" in p for p in problems)
    shovel = Step(type=StepType.DIG_DOWN, tool="wooden_shovel")
    assert any(
        "needs a pickaxe" in p
        for p in check_decomposition(kb, layer_goal(1), Decomposition(shovel, [g("wooden_shovel")]))
    )
    assert check_decomposition(kb, layer_goal(9), Decomposition(dig, [])) != []
    assert any("not craft" in p for p in check_decomposition(kb, layer_goal(1), Decomposition(craft("stick"), [])))
