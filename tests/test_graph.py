"""Crafting graph queries: producers, requirements, tiers, reachability, export."""

from __future__ import annotations

import pytest

from barsym.graph import CraftGraph
from barsym.graph_export import to_dot, to_mermaid


@pytest.fixture(scope="module")
def graph(kb):
    return CraftGraph(kb)


def test_producers_and_requirements(graph):
    assert graph.producers("iron_ingot") == ["craft:iron_ingot#0", "craft:iron_ingot#1", "smelt:iron_ingot#0"]
    needs = graph.requirements("craft:wooden_pickaxe#0")
    assert needs == {"ingredient": [("#planks", 3), ("stick", 2)], "station": [("crafting_table", 1)]}
    smelt = graph.requirements("smelt:iron_ingot#0")
    assert smelt["station"] == [("furnace", 1)] and smelt["ingredient"] == [("iron_ore", 1)] and "fuel" in smelt
    assert graph.requirements("mine:diamond") == {"layer": [("deep", 1)], "tool": [("pickaxe>=iron", 1)]}
    assert graph.requirements("dig_down:1")["layer"] == [("surface", 1)]


def test_tool_tiers(graph):
    assert graph.compare_tools("stone_pickaxe", "wooden_pickaxe") == 1
    assert graph.compare_tools("golden_pickaxe", "wooden_pickaxe") == 0
    assert graph.compare_tools("iron_axe", "diamond_axe") == -1
    with pytest.raises(ValueError):
        graph.compare_tools("iron_axe", "iron_pickaxe")
    with pytest.raises(KeyError):
        graph.compare_tools("stick", "iron_pickaxe")


@pytest.mark.parametrize("item", ["diamond_pickaxe", "bucket", "leather_boots", "white_bed", "torch", "charcoal"])
def test_overworld_items_are_reachable(graph, item):
    assert graph.reachability(item).reachable


@pytest.mark.parametrize(
    "item,blocker",
    [
        ("netherite_ingot", "ancient_debris"),
        ("blaze_powder", "blaze_rod"),
        ("beacon", "nether_star"),
        ("nether_bricks", "netherrack"),
    ],
)
def test_unreachable_items_name_what_blocks_them(graph, item, blocker):
    reach = graph.reachability(item)
    assert not reach.reachable and blocker in reach.blockers
    assert reach.reason.startswith(f"{item} cannot be obtained from overworld resources: needs")


def test_costs_prefer_the_non_cyclic_recipe(graph):
    assert graph.best_producer("iron_ingot") == "smelt:iron_ingot#0"  # not from iron_block or nuggets
    assert graph.best_producer("diamond") == "mine:diamond"
    assert graph.best_producer("stick") == "craft:stick#0"  # planks, not bamboo


def test_compact_subgraph_shows_one_way(graph):
    sub = graph.dependency_subgraph("diamond_pickaxe")
    names = {d.get("name") for _, d in sub.nodes()}
    assert {"logs", "planks", "stick", "crafting_table", "iron_ingot", "diamond"} <= names
    assert "golden_pickaxe" not in names and "acacia_planks" not in names
    full = graph.dependency_subgraph("diamond_pickaxe", full=True)
    assert len(full) > len(sub)
    dot, mermaid = to_dot(sub, "diamond_pickaxe"), to_mermaid(sub)
    edges = sub.number_of_edges()
    assert dot.count("->") == edges == sum(1 for _ in sub.edges()) and mermaid.count("-->") == edges


def test_the_graph_agrees_with_networkx(graph):
    """The own storage answers what networkx answers on the same nodes and edges (ancestors, degrees)."""
    import networkx as nx

    g = graph.g.to_networkx()
    assert list(g.nodes) == list(graph.g) and g.number_of_edges() == graph.g.number_of_edges()
    for node in ("item:diamond_pickaxe", "item:stick", "craft:piston#0", "layer:2"):
        assert graph.g.ancestors(node) == nx.ancestors(g, node)
        assert set(graph.g.predecessors(node)) == set(g.predecessors(node))
        assert set(graph.g.successors(node)) == set(g.successors(node))
        assert graph.g.in_degree(node) == g.in_degree(node)
    sub = graph.dependency_subgraph("piston", full=True)
    assert set(sub) == nx.ancestors(g, "item:piston") & graph.reachable_nodes | {"item:piston"}


def test_graph_exits_1_for_an_unreachable_item(capsys):
    from barsym.cli import main

    assert main(["graph", "stick"]) == 0
    assert "can be obtained" in capsys.readouterr().err
    assert main(["graph", "beacon"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("digraph") and "nether_star" in err and err.count("\n") == 1
