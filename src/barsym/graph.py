"""The crafting / tool-tier graph: who makes what, with which tool, station and layer.

A directed graph (:class:`~barsym.digraph.Digraph`) with two kinds of node: items (``item:stick``) and actions
(``craft:stick#0``, ``smelt:iron_ingot#0``, ``mine:diamond``, ``kill:leather``,
``dig_down:2``). Edges run from what an action needs to the action (``role``
ingredient / tool / station / layer, with a ``count``) and from the action to
what it makes. Requirements that several items satisfy (any planks, any
pickaxe of tier stone or better) go through a ``one_of:`` node.

Reachability is a fixpoint from the surface (``layer:0``; under a profile
without gathering, also from every raw item, which only a start inventory can
hold): an action is enabled when all it needs is reachable; an item when any
action making it is enabled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .digraph import Digraph
from .kb import Action, KnowledgeBase, Rules, Slot, rules_for

START = "layer:0"


def item_node(name: str) -> str:
    return f"item:{name}"


@dataclass(frozen=True)
class Reachability:
    item: str
    reachable: bool
    blockers: tuple[str, ...] = ()  # leaf items nothing in the overworld makes
    loot: tuple[tuple[str, str], ...] = ()  # blockers found only as loot, with where

    @property
    def reason(self) -> str:
        if self.reachable:
            return f"{self.item} can be obtained from overworld resources"
        where = {item: _found(how) for item, how in self.loot}
        if self.item in where:
            return f"{self.item} cannot be crafted, smelted, mined or hunted: it is only {where[self.item]}"
        if not self.blockers:
            return (
                f"{self.item} cannot be obtained from overworld resources: it is only made from items "
                f"that are made from it (a cycle with no way in)"
            )
        needs = ", ".join(f"{b} (only {where[b]})" if b in where else b for b in self.blockers)
        return f"{self.item} cannot be obtained from overworld resources: needs {needs}"


def _found(how: str) -> str:
    """Where a loot item is found, as the reason says it: ``found as loot, in chest loot (...)``; or, for an ore
    block of 1.17 on (the knowledge base's ``loot`` says ``mined whole with a Silk Touch pickaxe ...``), that."""
    return how if how.startswith("mined ") else f"found as loot, in {how}"


class CraftGraph:
    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None):
        self.kb = kb
        self.rules = rules_for(kb, rules)
        self.g = Digraph()
        self._build()

    # ---- construction ----------------------------------------------------------
    def _add_item(self, name: str) -> str:
        node = item_node(name)
        if node not in self.g:
            self.g.add_node(node, kind="item", name=name)
        return node

    def _choice(self, label: str, accepts: tuple[str, ...]) -> str:
        """An ingredient slot: the item itself, or a one_of node over the accepted items."""
        if len(accepts) == 1:
            return self._add_item(accepts[0])
        node = f"one_of:{label}"
        if node not in self.g:
            self.g.add_node(node, kind="one_of", name=label)
            for name in accepts:
                self.g.add_edge(self._add_item(name), node, role="member")
        return node

    def _tool_node(self, kind: str, tier: int) -> str:
        tools = self.rules.tools_for(kind, tier)
        if tools == [kind]:
            return self._add_item(kind)  # a tool kind without tiers (shears)
        return self._choice(f"{kind}>={self.kb.tier_name(tier)}", tuple(tools))

    def _need(self, source: str, action: str, role: str, count: int = 1) -> None:
        self.g.add_edge(source, action, role=role, count=count)

    def _slot(self, slot: Slot, action: str) -> None:
        self._need(self._choice(slot.label, slot.accepts), action, "ingredient", slot.count)

    def _build(self) -> None:
        """One action node per action of the rule book's schema (one batch each), with an edge per need."""
        kb, g = self.kb, self.g
        for name in kb.items:
            self._add_item(name)
        for layer in range(len(kb.layers)):
            g.add_node(f"layer:{layer}", kind="layer", name=kb.layers[layer])
        for act in self.rules.every_action():
            node = act.node
            if act.kind == "dig_down":
                g.add_node(node, kind="action", action="dig_down", name=f"dig down to layer {act.reaches}")
                self._need(f"layer:{act.layer}", node, "layer")
                self._tool(act, node)
                g.add_edge(node, f"layer:{act.reaches}", role="makes", count=act.makes)
                continue
            if act.kind in ("craft", "smelt"):
                g.add_node(node, kind="action", action=act.kind, name=act.item, recipe=act.recipe)
                for slot in act.needs:
                    self._slot(slot, node)
                if act.station:
                    self._need(self._add_item(act.station), node, "station")
                if act.fuel:
                    self._need(self._choice("fuel", self.rules.fuel_items), node, "fuel")
            else:
                g.add_node(node, kind="action", action=act.kind, name=act.item, origin=act.origin)
                self._layers(act.layers, node)
                self._tool(act, node)
                for slot in act.needs:
                    self._need(self._add_item(slot.accepts[0]), node, "ingredient", slot.count)
            g.add_edge(node, item_node(act.item), role="makes", count=act.makes)

    def _tool(self, act: Action, node: str) -> None:
        if act.tool is not None:
            self._need(self._tool_node(act.tool.kind, act.tool.tier), node, "tool")

    def _layers(self, layers: frozenset[int], node: str) -> None:
        names = tuple(f"layer:{n}" for n in sorted(layers))
        if len(names) == 1:
            self._need(names[0], node, "layer")
            return
        choice = f"one_of:layers{min(layers)}-{max(layers)}"
        for layer in names:
            self.g.add_edge(layer, choice, role="member")
        self.g.attrs(choice).update(kind="one_of", name=choice[7:])
        self._need(choice, node, "layer")

    # ---- queries -----------------------------------------------------------------
    def producers(self, item: str) -> list[str]:
        """Action nodes that make ``item``."""
        return sorted(self.g.predecessors(item_node(item))) if item_node(item) in self.g else []

    def requirements(self, action: str) -> dict[str, list[tuple[str, int]]]:
        """What an action needs, by role: ingredient, tool, station, layer, fuel."""
        out: dict[str, list[tuple[str, int]]] = {}
        for source, data in self.g.in_edges(action):
            out.setdefault(data["role"], []).append((self.g.attrs(source)["name"], data.get("count", 1)))
        return {role: sorted(v) for role, v in out.items()}

    def compare_tools(self, a: str, b: str) -> int:
        """-1, 0 or 1 as tool ``a`` is of a lower, equal or higher tier than ``b`` (see the rule book)."""
        return self.rules.compare_tools(a, b)

    @cached_property
    def seeds(self) -> tuple[str, ...]:
        """Where reachability starts: the surface; under a profile without gathering (Plancraft's), also every
        item nothing makes, since only the start inventory can hold those."""
        if self.rules.can_gather:
            return (START,)
        raw = sorted(n for n, d in self.g.nodes() if d.get("kind") == "item" and not self.producers(d["name"]))
        return (START, *raw)

    @cached_property
    def reachable_nodes(self) -> frozenset[str]:
        g = self.g
        reached = set(self.seeds)
        frontier = list(self.seeds)
        waiting = {n: g.in_degree(n) for n, d in g.nodes() if d.get("kind") == "action"}
        while frontier:
            node = frontier.pop()
            for nxt in g.successors(node):
                if nxt in reached:
                    continue
                kind = g.attrs(nxt).get("kind")
                if kind == "action":
                    waiting[nxt] -= 1
                    if waiting[nxt] > 0:
                        continue
                reached.add(nxt)
                frontier.append(nxt)
        return frozenset(reached)

    @cached_property
    def costs(self) -> dict[str, float]:
        """Effort to obtain one unit of each node, for ranking alternatives.

        An action costs 1 plus, per ingredient, ``count x cost`` shared over the
        units it makes, plus the cost of each tool, station and layer it needs
        (these are reused, so they count once). An item costs its cheapest
        producer; a ``one_of`` its cheapest member. Values are a fixpoint, so
        cycles such as iron_block <-> iron_ingot settle on the non-cyclic way.
        """
        g = self.g
        inf = float("inf")
        cost = {n: inf for n in g}
        for seed in self.seeds:
            cost[seed] = 0.0
            if seed != START:  # an item held at the start: the choices it is a member of cost nothing either
                self._lower_choices(seed, 0.0, cost)
        actions = [n for n, d in g.nodes() if d.get("kind") == "action"]
        makes = {a: max((d.get("count", 1) for _, d in g.out_edges(a)), default=1) for a in actions}
        changed = True
        while changed:
            changed = False
            for action in actions:
                total = 1.0
                for source, data in g.in_edges(action):
                    c = cost[source]
                    if c == inf:
                        total = inf
                        break
                    if data["role"] == "ingredient":
                        total += data.get("count", 1) * c / makes[action]
                    elif data["role"] != "fuel":
                        total += c
                if total < cost[action]:
                    cost[action] = total
                    changed = True
                    for target in g.successors(action):
                        if total < cost[target]:
                            cost[target] = total
                            self._lower_choices(target, total, cost)
        return cost

    def _lower_choices(self, node: str, value: float, cost: dict[str, float]) -> None:
        for nxt in self.g.successors(node):
            if self.g.attrs(nxt).get("kind") in ("one_of", "layer") and value < cost[nxt]:
                cost[nxt] = value
                self._lower_choices(nxt, value, cost)

    def best_producer(self, item: str) -> str | None:
        """The cheapest action that makes ``item`` (ties broken by name), or None."""
        options = [(self.costs[a], a) for a in self.producers(item) if self.costs[a] < float("inf")]
        return min(options)[1] if options else None

    def reachability(self, item: str) -> Reachability:
        name = self.kb.resolve(item)
        if item_node(name) in self.reachable_nodes:
            return Reachability(name, True)
        blockers = tuple(sorted(self._blockers(item_node(name), set())))
        loot = tuple((b, self.kb.loot[b]) for b in blockers + (name,) if b in self.kb.loot)
        return Reachability(name, False, blockers, loot)

    def _blockers(self, node: str, seen: set[str]) -> set[str]:
        """Leaf items that keep ``node`` out of reach (first unmet need of each producer)."""
        if node in seen or node in self.reachable_nodes:
            return set()
        seen.add(node)
        data = self.g.attrs(node)
        preds = list(self.g.predecessors(node))
        if data.get("kind") == "item" and not preds:
            return {data["name"]}
        found: set[str] = set()
        if data.get("kind") == "action":
            for pred in preds:
                found |= self._blockers(pred, seen)
        else:
            for pred in preds:
                found |= self._blockers(pred, seen)
        return found

    def dependency_subgraph(self, item: str, full: bool = False) -> Digraph:
        """What ``item`` depends on.

        By default the view is compact: each ``one_of`` choice keeps one member
        (the generic name such as ``planks`` if there is one, else the preferred
        fuel or the first reachable item), so the picture shows one way to make
        the item rather than every wood type. ``full=True`` keeps every branch.
        """
        target = item_node(self.kb.resolve(item))
        if full:
            nodes = self.g.ancestors(target) | {target}
            if target in self.reachable_nodes:
                nodes = {n for n in nodes if n in self.reachable_nodes}
            return self.g.subgraph(nodes)
        keep = {target}
        stack = [target]
        while stack:
            node = stack.pop()
            preds = sorted(self.g.predecessors(node))
            kind = self.g.attrs(node).get("kind")
            if kind == "one_of":
                preds = self._preferred_member(node, preds)
            elif kind == "item":
                best = self.best_producer(self.g.attrs(node)["name"])
                preds = [best] if best else preds
            for pred in preds:
                if pred not in keep:
                    keep.add(pred)
                    stack.append(pred)
        return self.g.subgraph(keep)

    def _preferred_member(self, node: str, members: list[str]) -> list[str]:
        names = [self.g.attrs(m)["name"] for m in members]
        for generic in self.kb.generic:
            if generic in names:
                return [item_node(generic)]
        if node == "one_of:fuel":
            for preferred in self.rules.preferred_fuels:
                if preferred in names:
                    return [item_node(preferred)]
        return [min(members, key=lambda m: (self.costs[m], m))]
