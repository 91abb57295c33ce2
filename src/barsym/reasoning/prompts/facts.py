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

Every number comes from the rule book's action schema (:meth:`~barsym.kb.Rules.ways`:
batches, station, fuel, tool, layer) and ``fuel_units`` -- and BAR's
conventions (family names, planks as fuel, the lowest tool) from the callables
the caller passes, which are the symbolic decomposer's, so the facts cannot
disagree with the verifier or with the grammar built from the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ...graph import CraftGraph, item_node
from ...kb import Action, Rules

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

    def _head(self) -> str:
        head = "dig down" if self.item is None else f"{self.verb} {self.count} {self.item}"
        return head + (f" with {self.tool}" if self.tool else "")

    def text(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        needs = ", ".join(n.text() for n in self.needs) or "nothing"
        return f"{self._head()}{detail} needs {needs}"

    def as_reply(self) -> str:
        """The way as BAR's reply writes it: ``craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table``."""
        needs = ", ".join(n.text() for n in self.needs)
        return f"{self._head()}: {needs}" if needs else self._head()


@dataclass(frozen=True)
class GoalFacts:
    ways: tuple[Way, ...]

    def text(self) -> str:
        """One line for the prompt ("" when nothing is known: the grammar then has no way either)."""
        if not self.ways:
            return ""
        return "Known: " + "; or ".join(way.text() for way in self.ways) + "."

    def as_replies(self) -> str:
        """The line BAR's goal message is: each way in the reply's own words, no per-unit detail.

        Every token of a goal's message is evaluated after the cached prefix, and those tokens are
        most of what ``barsym plan`` costs (docs/llm-runtime.md); written as the reply would be,
        ``craft 1 diamond_pickaxe (1 craft of 1) needs 3 diamond, ...`` loses 7 of its tokens, and
        the goal line above it (the first way names the goal) another 10. The counts are the same.
        """
        if not self.ways:
            return ""
        return "Known: " + "; or ".join(way.as_reply() for way in self.ways) + "."


class FactBook:
    """Facts for goals, under one rule book and the conventions of one planner."""

    def __init__(
        self,
        rules: Rules,
        graph: CraftGraph,
        *,
        choose: Callable[[tuple[str, ...]], str],
        tool_for: Callable[..., str],
        fuel: str,
    ):
        self.rules, self.kb, self.graph = rules, rules.kb, graph
        self.choose, self.tool_for, self.fuel = choose, tool_for, fuel
        self._held: Callable[[str], int] | None = None  # the start inventory of the goal being described

    # ---- item goals -------------------------------------------------------------------
    def for_item(
        self, item: str, count: int, fuel_credit: float = 0.0, held: Callable[[str], int] | None = None
    ) -> GoalFacts:
        """The ways to obtain ``count`` ``item`` (the graph's cheapest first), with their needs.

        ``held`` counts the start inventory: a tool held that serves is named instead of the lowest tier
        (as the planner's conventions choose it), so the facts never point at a tool that is not at hand."""
        self._held = held
        reach = self.graph.reachable_nodes
        ways: list[tuple[str, Way]] = []
        for action in self.rules.ways(item, count):
            if action.node not in reach:
                continue
            if action.kind == "craft":
                ways.append((action.node, self._craft(action)))
            elif action.kind == "smelt":
                ways.append((action.node, self._smelt(action, fuel_credit)))
            else:
                ways.append((action.node, self._gather(action)))
        best = self.graph.best_producer(item)
        ways.sort(key=lambda pair: pair[0] != best)  # stable: the rest keep the knowledge base's order
        return GoalFacts(tuple(way for _, way in ways[:MAX_WAYS]))

    def members(self, accepts: tuple[str, ...]) -> tuple[str, ...]:
        """What to write for a slot: the family name when there is one, else the reachable members, the
        conventional one first."""
        reach = self.graph.reachable_nodes
        usable = [name for name in accepts if item_node(name) in reach]
        generic = [name for name in usable if name in self.kb.generic] if self.rules.generic_names else []
        if generic:
            return (generic[0],)
        first = self.choose(accepts)
        ordered = [first] + [name for name in usable if name != first]
        return tuple(ordered[:MAX_MEMBERS])

    # The detail says what the totals come from, where they are not plain copies of the recipe:
    # every token of it is evaluated on every call, so what the needs already say is not repeated.
    def _craft(self, action: Action) -> Way:
        runs = action.runs
        needs = [Need(slot.count, self.members(slot.accepts), Role.INGREDIENT) for slot in action.needs]
        if action.station:
            needs.append(Need(1, (action.station,), Role.STATION))
        detail = f"{runs} craft{'s' if runs != 1 else ''} of {action.makes // runs}"
        if runs > 1:
            detail += ", each " + " and ".join(
                f"{slot.count // runs} {' or '.join(self.members(slot.accepts))}" for slot in action.needs
            )
        return Way("craft", action.item, action.count, tuple(needs), detail=detail)

    def _smelt(self, action: Action, credit: float) -> Way:
        rules = self.rules
        needs = [Need(slot.count, self.members(slot.accepts), Role.INGREDIENT) for slot in action.needs]
        detail = ""
        if action.fuel:
            missing = max(0.0, action.fuel - credit)
            units = rules.fuel_units(self.fuel, missing)
            if units:
                needs.append(Need(units, (self.fuel,), Role.FUEL))
            detail = f"1 {self.fuel} burns {rules.fuel_value(self.fuel):g} items"
            if credit:
                detail += f", fuel for {missing:g} still missing"
        if action.station:
            needs.append(Need(1, (action.station,), Role.STATION))
        return Way("smelt", action.item, action.count, tuple(needs), detail=detail)

    def _gather(self, action: Action) -> Way:
        needs: list[Need] = []
        tool, detail = None, ""
        if action.tool is not None:
            held = self._held
            tool = (
                self.tool_for(action.tool.kind, action.tool.tier, held=held)
                if held is not None
                else self.tool_for(action.tool.kind, action.tool.tier)
            )
            needs.append(Need(1, (tool,), Role.TOOL))
            if held is not None and held(tool) > 0:
                detail = "held at the start"
            elif len(action.tool.options) > 1:
                detail = "the lowest tier that can"
        if action.layer > 0:
            needs.append(Need(action.layer, (), Role.LAYER))
        return Way(action.kind, action.item, action.count, tuple(needs), tool=tool, detail=detail)

    # ---- layer goals ------------------------------------------------------------------
    def for_layer(self, layer: int, tool: str | None) -> GoalFacts:
        """Reaching ``layer``: one dig down with ``tool`` from the layer above."""
        if not 1 <= layer <= self.kb.deepest_layer or tool is None:
            return GoalFacts(())
        needs = [Need(1, (tool,), Role.TOOL)]
        start = self.rules.dig(layer).layer
        if start > 0:
            needs.append(Need(start, (), Role.LAYER))
        detail = f"to the {self.kb.layers[layer]} layer"
        return GoalFacts((Way("dig down", None, None, tuple(needs), tool=tool, detail=detail),))
