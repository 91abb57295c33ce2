"""How deep in the tech tree a goal sits: the report's "success against depth".

BAR's groups (stone, iron, gold, redstone, diamond) are a coarse stand-in for
how hard a goal is; the crafting graph gives a number. The *tech-tree depth*
of an item is the number of item tiers between the surface and it, by the
shallowest way the game allows:

- an action is available at the depth of the deepest thing it needs
  (ingredients, tool, station, fuel, the layer it runs in);
- an item is one deeper than its shallowest producing action;
- a choice (any planks, a pickaxe of stone tier or better) is as deep as its
  shallowest member; a layer as deep as the dig that reaches it.

So logs are 1, planks 2 (sticks too: bamboo makes them), the crafting table 3,
a wooden pickaxe 4, cobblestone 5, a stone pickaxe 6, iron ore 7, an iron
ingot 8, an iron pickaxe 9, diamonds 10. It is a fixpoint
(values only fall from infinity), so cycles such as iron_block <-> iron_ingot
settle on the way in; an item out of reach has no depth (None).
"""

from __future__ import annotations

from ..graph import CraftGraph, item_node
from ..kb import KnowledgeBase

INF = float("inf")


def depths(graph: CraftGraph) -> dict[str, float]:
    """Depth of every node of ``graph`` (``inf`` for nodes out of reach)."""
    g = graph.g
    depth = {n: INF for n in g}
    for seed in graph.seeds:
        depth[seed] = 0.0
    changed = True
    while changed:
        changed = False
        for node in g:
            kind = g.attrs(node).get("kind")
            preds = list(g.predecessors(node))
            if node in graph.seeds or not preds:
                continue
            if kind == "action":
                value = max(depth[p] for p in preds)
            elif kind == "item":
                value = min(depth[p] for p in preds) + 1
            else:  # one_of, layer
                value = min(depth[p] for p in preds)
            if value < depth[node]:
                depth[node] = value
                changed = True
    return depth


#: (id of the knowledge base, rules) -> (the knowledge base, kept alive so the id stays its own; depths)
_CACHE: dict[tuple[int, str | None], tuple[KnowledgeBase, dict[str, float]]] = {}


def _depths_for(kb: KnowledgeBase, rules: str | None) -> dict[str, float]:
    key = (id(kb), rules)
    if key not in _CACHE:
        _CACHE[key] = (kb, depths(CraftGraph(kb, rules)))
    return _CACHE[key][1]


def goal_depth(kb: KnowledgeBase, item: str, rules: str | None = None) -> int | None:
    """The tech-tree depth of ``item`` under ``rules`` (None: unknown item, or out of reach)."""
    try:
        node = item_node(kb.resolve(item))
    except (KeyError, ValueError):
        return None
    value = _depths_for(kb, rules).get(node, INF)
    return None if value == INF else int(value)
