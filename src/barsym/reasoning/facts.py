"""The facts about a goal that go into its prompt, computed from the rule book.

A 135M-parameter model does not know that a stone pickaxe takes three
cobblestone, and cannot work out that 13 planks are four crafts of four: asked
to recall, it wrote ``1`` for every count and was refused at its first try for
more than half of the goals. So the prompt now states what the knowledge base
knows about the goal: each way of making it with the counts for *this* goal
(crafts run whole batches), the station, the fuel still missing, the tool and
the lowest tier that can do the job, the layer. The model still writes the
answer and chooses between ways and members (coal or charcoal); the verifier
still checks everything.

Every number comes from :class:`~barsym.kb.Rules` -- ``batches``,
``needs_table``, ``fuel_units``, ``source``, ``tools_for`` -- and BAR's
conventions (family names, planks as fuel, the lowest tool) from the callables
the caller passes, which are the symbolic decomposer's, so the facts cannot
disagree with the verifier or with the grammar built from the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..graph import CraftGraph, item_node
from ..kb import CRAFTING_TABLE, FURNACE, Rules, batches

__all__ = ["FactBook", "GoalFacts", "Need", "Role", "Way"]

MAX_WAYS = 3
MAX_MEMBERS = 3


class Role(str, Enum):
    INGREDIENT = "ingredient"
    STATION = "station"
    FUEL = "fuel"
    TOOL = "tool"
    LAYER = "layer"


@dataclass(frozen=True)
class Need:
    """One thing a way needs: ``count`` of any of ``names`` (a layer: ``count`` is its number)."""

    count: int
    names: tuple[str, ...]
    role: Role

    def text(self) -> str:
        if self.role is Role.LAYER:
            return f"layer {self.count}"
        return f"{self.count} {' or '.join(self.names)}"


@dataclass(frozen=True)
class Way:
    """One way of obtaining the goal: the step and everything it needs, for the goal's count."""

    verb: str  # craft, smelt, mine, kill, dig down
    item: str | None
    count: int | None
    needs: tuple[Need, ...]
    tool: str | None = None
    detail: str = ""  # the per-unit fact behind the counts: "4 crafts of 4, each from 1 logs"

    def text(self) -> str:
        head = "dig down" if self.item is None else f"{self.verb} {self.count} {self.item}"
        head += f" with {self.tool}" if self.tool else ""
        detail = f" ({self.detail})" if self.detail else ""
        needs = ", ".join(n.text() for n in self.needs) or "nothing"
        return f"{head}{detail} needs {needs}"


@dataclass(frozen=True)
class GoalFacts:
    ways: tuple[Way, ...]

    def text(self) -> str:
        """One line for the prompt ("" when nothing is known: the grammar then has no way either)."""
        if not self.ways:
            return ""
        return "Known: " + "; or ".join(way.text() for way in self.ways) + "."


class FactBook:
    """Facts for goals, under one rule book and the conventions of one planner."""

    def __init__(self, rules: Rules, graph: CraftGraph, *, choose: Callable[[tuple[str, ...]], str],
                 tool_for: Callable[[str, int], str], fuel: str):
        self.rules, self.kb, self.graph = rules, rules.kb, graph
        self.choose, self.tool_for, self.fuel = choose, tool_for, fuel

    # ---- item goals -------------------------------------------------------------------
    def for_item(self, item: str, count: int, fuel_credit: float = 0.0) -> GoalFacts:
        """The ways to obtain ``count`` ``item`` (the graph's cheapest first), with their needs."""
        reach = self.graph.reachable_nodes
        ways: list[tuple[str, Way]] = []
        for index, recipe in enumerate(self.kb.crafts.get(item, ())):
            action = f"craft:{item}#{index}"
            if action in reach:
                ways.append((action, self._craft(item, count, recipe)))
        for index, recipe in enumerate(self.kb.smelts.get(item, ())):
            action = f"smelt:{item}#{index}"
            if action in reach:
                ways.append((action, self._smelt(item, count, recipe, fuel_credit)))
        source = self.rules.source(item)
        if source is not None and f"{source.kind}:{item}" in reach:
            ways.append((f"{source.kind}:{item}", self._gather(item, count, source)))
        best = self.graph.best_producer(item)
        ways.sort(key=lambda pair: pair[0] != best)  # stable: the rest keep the knowledge base's order
        return GoalFacts(tuple(way for _, way in ways[:MAX_WAYS]))

    def members(self, accepts: tuple[str, ...]) -> tuple[str, ...]:
        """What to write for a slot: the family name when there is one, else the reachable members, the
        conventional one first."""
        reach = self.graph.reachable_nodes
        usable = [name for name in accepts if item_node(name) in reach]
        generic = [name for name in usable if name in self.kb.generic]
        if generic:
            return (generic[0],)
        first = self.choose(accepts)
        ordered = [first] + [name for name in usable if name != first]
        return tuple(ordered[:MAX_MEMBERS])

    # The detail says what the totals come from, where they are not plain copies of the recipe:
    # every token of it is evaluated on every call, so what the needs already say is not repeated.
    def _craft(self, item: str, count: int, recipe) -> Way:
        runs = batches(count, recipe.count)
        needs = [Need(runs * i.count, self.members(i.accepts), Role.INGREDIENT) for i in recipe.ingredients]
        if self.rules.needs_table(recipe):
            needs.append(Need(1, (CRAFTING_TABLE,), Role.STATION))
        detail = f"{runs} craft{'s' if runs != 1 else ''} of {recipe.count}"
        if runs > 1:
            detail += ", each " + " and ".join(f"{i.count} {' or '.join(self.members(i.accepts))}"
                                               for i in recipe.ingredients)
        return Way("craft", item, count, tuple(needs), detail=detail)

    def _smelt(self, item: str, count: int, recipe, credit: float) -> Way:
        rules = self.rules
        needs = [Need(count, self.members(recipe.input.accepts), Role.INGREDIENT)]
        detail = ""
        if rules.fuel_needed:
            missing = max(0.0, count - credit)
            units = rules.fuel_units(self.fuel, missing)
            if units:
                needs.append(Need(units, (self.fuel,), Role.FUEL))
            detail = f"1 {self.fuel} burns {rules.fuel_value(self.fuel):g} items"
            if credit:
                detail += f", fuel for {missing:g} still missing"
        if rules.furnace_needed:
            needs.append(Need(1, (FURNACE,), Role.STATION))
        return Way("smelt", item, count, tuple(needs), detail=detail)

    def _gather(self, item: str, count: int, source) -> Way:
        needs: list[Need] = []
        tool, detail = None, ""
        if source.tool_kind:
            tool = self.tool_for(source.tool_kind, source.min_tier)
            needs.append(Need(1, (tool,), Role.TOOL))
            if len(self.rules.tools_for(source.tool_kind, source.min_tier)) > 1:
                detail = "the lowest tier that can"
        low = min(source.layers)
        if low > 0:
            needs.append(Need(low, (), Role.LAYER))
        return Way(source.kind, item, count, tuple(needs), tool=tool, detail=detail)

    # ---- layer goals ------------------------------------------------------------------
    def for_layer(self, layer: int, tool: str | None) -> GoalFacts:
        """Reaching ``layer``: one dig down with ``tool`` from the layer above."""
        if not 1 <= layer <= self.kb.deepest_layer or tool is None:
            return GoalFacts(())
        needs = [Need(1, (tool,), Role.TOOL)]
        if layer > 1:
            needs.append(Need(layer - 1, (), Role.LAYER))
        detail = f"to the {self.kb.layers[layer]} layer"
        return GoalFacts((Way("dig down", None, None, tuple(needs), tool=tool, detail=detail),))
