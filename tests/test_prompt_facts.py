"""The facts put into each goal's prompt match the knowledge base and the rule book.

Checked two ways: directly against the recipes, sources and rules for a few
goals; and for every goal the symbolic planner decomposes in BAR's 53 tasks,
the first way the facts list needs exactly what the symbolic decomposer's
answer asks for (same rules, same conventions), so the facts never tell the
model something the verifier would refuse.
"""

from __future__ import annotations

import pytest

from barsym.eval import load_dataset
from barsym.kb import Rules, batches
from barsym.planner import PlanContext, SymbolicDecomposer, goal_layer
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.prompts.facts import FactBook, Role
from testdata import BAR_DIR


@pytest.fixture(scope="module")
def symbolic(kb):
    return SymbolicDecomposer(kb, graph=graph_for(kb), prefer=kb.prefer)


@pytest.fixture(scope="module")
def book(kb, symbolic):
    return FactBook(Rules(kb), graph_for(kb), choose=symbolic.choose, tool_for=symbolic.tool_for, fuel=symbolic.fuel)


def needs(way) -> list[tuple[str, int]]:
    return [(f"layer:{n.count}", 1) if n.role is Role.LAYER else (n.names[0], n.count) for n in way.needs]


def test_craft_counts_are_whole_batches_of_the_recipe(kb, book):
    rules = Rules(kb)
    (recipe,) = kb.crafts["planks"][:1]
    way = book.for_item("planks", 13).ways[0]
    runs = batches(13, recipe.count)
    assert way.verb == "craft" and f"{runs} crafts of {recipe.count}" in way.detail
    assert needs(way) == [("logs", runs * recipe.ingredients[0].count)]
    pickaxe = book.for_item("stone_pickaxe", 1).ways[0]
    recipe = kb.crafts["stone_pickaxe"][0]
    assert rules.needs_table(recipe) and ("crafting_table", 1) in needs(pickaxe)
    assert sorted(n for n, _ in needs(pickaxe)) == ["cobblestone", "crafting_table", "stick"]


def test_smelting_fuel_is_what_is_still_missing(kb, book):
    rules = Rules(kb)
    fresh = book.for_item("iron_ingot", 3).ways[0]
    assert needs(fresh) == [("iron_ore", 3), ("planks", rules.fuel_units("planks", 3)), ("furnace", 1)]
    credited = book.for_item("iron_ingot", 3, fuel_credit=1.5).ways[0]
    assert ("planks", rules.fuel_units("planks", 1.5)) in needs(credited)
    assert "fuel for 1.5 still missing" in credited.text()
    covered = book.for_item("iron_ingot", 1, fuel_credit=1.0).ways[0]
    assert [name for name, _ in needs(covered)] == ["iron_ore", "furnace"]


def test_mining_names_the_lowest_tool_and_the_layer(kb, book):
    source = kb.sources["iron_ore"]
    rules = Rules(kb)
    way = book.for_item("iron_ore", 3).ways[0]
    lowest = rules.lowest_tool(source.tool_kind, source.min_tier, lambda n: 0.0)
    assert way.tool == lowest and needs(way) == [(lowest, 1), (f"layer:{min(source.layers)}", 1)]
    assert book.for_item("logs", 3).text() == "Known: mine 3 logs needs nothing."


def test_a_slot_without_a_family_lists_its_members(book):
    torch = book.for_item("torch", 4).ways[0]
    assert torch.needs[0].names[:2] in (("coal", "charcoal"), ("charcoal", "coal"))
    assert "1 coal or charcoal" in torch.text() or "1 charcoal or coal" in torch.text()


def test_layer_goals_name_the_dig(kb, book):
    facts = book.for_layer(2, "stone_pickaxe")
    assert needs(facts.ways[0]) == [("stone_pickaxe", 1), ("layer:1", 1)]
    assert book.for_layer(kb.deepest_layer + 1, "stone_pickaxe").text() == ""


def test_facts_agree_with_the_symbolic_answers_on_barss_tasks(kb, symbolic, book):
    planner = symbolic_planner(kb)
    checked = set()
    for task in load_dataset(BAR_DIR, kb):
        root = task.goal
        for node in planner.plan(root).nodes:
            goal = node.goal
            layer = goal_layer(goal)
            key = (goal.item, goal.count)
            if node.decomposition is None or key in checked:
                continue
            checked.add(key)
            answer = symbolic.decompose(goal, PlanContext(kb, root))
            if layer is not None:
                facts = book.for_layer(layer, symbolic.dig_tool(layer, root.item))
            else:
                facts = book.for_item(kb.resolve(goal.item), goal.count)
            expected = [(g.item, g.count) for g in answer.subgoals]
            assert facts.ways and needs(facts.ways[0]) == expected, (goal, facts.text())
    assert len(checked) > 40
