"""The grounded action schema: what one craft, smelt, mine, kill or dig down needs and makes.

Why a schema: the crafting graph, the planners, the facts of the prompts, the
reply grammar, the verifier, the repairer and the simulator all need to know
what an action needs. Each used to work it out from the recipes, sources and
tool tiers itself, and the copies drifted (the grammar offered a furnace and
fuel under rules that need neither). Now :meth:`barsym.kb.Rules.action` (and
:meth:`~barsym.kb.Rules.ways`, :meth:`~barsym.kb.Rules.dig`) answer it once,
per rule profile, and the others read an :class:`Action`:

- ``needs``: what it consumes, one :class:`Slot` per ingredient slot (any of
  ``accepts``, mixed freely), or per item a gathering step uses up (a bucket);
- ``makes``: units it leaves (whole batches for a craft);
- ``station``: the crafting table or furnace it needs at hand, if the profile says so;
- ``tool``: the kind and lowest tier of tool it needs (:class:`ToolNeed`, with the tools that serve);
- ``fuel``: items' worth of burn it needs (0 when the profile needs no fuel);
- ``layers``: where it can happen (empty: anywhere); a dig down happens on
  ``reaches - 1`` and reaches ``reaches``.

The choices an action leaves open (which member fills a slot, which of the
serving tools, which fuel) are policies of their consumers, except the one
tool-choice rule every planner shares: :meth:`barsym.kb.Rules.choose_tool`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .knowledge import Ingredient, Source

if TYPE_CHECKING:
    from .rules import Rules

#: a dig down needs a pickaxe (the knowledge base's ``dig_down_kind``) of this tier or better: any pickaxe
DIG_DOWN_TIER = 1
CRAFT, SMELT, DIG_DOWN = "craft", "smelt", "dig_down"


@dataclass(frozen=True, slots=True)
class Slot:
    """``count`` units of any of ``accepts`` (in consumption order), consumed by the action."""

    label: str
    accepts: tuple[str, ...]
    count: int

    @classmethod
    def of(cls, ingredient: Ingredient, runs: int) -> "Slot":
        return cls(ingredient.label, ingredient.accepts, runs * ingredient.count)

    @property
    def per_run(self) -> int:  # only meaningful for one-run actions (the graph's)
        return self.count

    def __contains__(self, item: str) -> bool:
        return item in self.accepts


@dataclass(frozen=True, slots=True)
class ToolNeed:
    """A tool of ``kind`` of ``tier`` or better; ``options`` are the tools that serve, lowest tier first."""

    kind: str
    tier: int
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Action:
    kind: str  # craft | smelt | mine | kill | dig_down
    item: str | None  # None for a dig down
    count: int  # units asked for
    needs: tuple[Slot, ...] = ()
    makes: int = 0
    runs: int = 1  # crafting batches (1 for every other kind)
    station: str | None = None
    tool: ToolNeed | None = None
    fuel: float = 0.0
    layers: frozenset[int] = frozenset()
    recipe: int = 0  # which of the item's recipes of this kind
    origin: str | None = None  # the block or mob a gathering step works on
    reaches: int | None = None  # a dig down's target layer

    @property
    def layer(self) -> int:
        """The shallowest layer the action can happen on (0: the surface, or anywhere)."""
        if self.reaches is not None:
            return self.reaches - 1
        return min(self.layers) if self.layers else 0

    @property
    def node(self) -> str:
        """Its name in the crafting graph: ``craft:stick#0``, ``mine:diamond``, ``dig_down:2``."""
        if self.kind == DIG_DOWN:
            return f"{DIG_DOWN}:{self.reaches}"
        if self.kind in (CRAFT, SMELT):
            return f"{self.kind}:{self.item}#{self.recipe}"
        return f"{self.kind}:{self.item}"

    def accepts(self, item: str) -> bool:
        """Whether ``item`` is something this action consumes."""
        return any(item in slot.accepts for slot in self.needs)


def tool_need(rules: "Rules", kind: str, tier: int) -> ToolNeed:
    return ToolNeed(kind, tier, tuple(rules.tools_for(kind, tier)))


def craft(rules: "Rules", item: str, count: int | None, index: int) -> Action:
    """Crafting ``count`` ``item`` by its recipe ``index`` (None: one batch)."""
    recipe = rules.kb.crafts[item][index]
    runs = 1 if count is None else rules.runs(count, recipe.count)
    table = rules.table_station if rules.needs_table(recipe) else None
    return Action(
        CRAFT,
        item,
        recipe.count if count is None else count,
        tuple(Slot.of(i, runs) for i in recipe.ingredients),
        runs * recipe.count,
        runs,
        table,
        recipe=index,
    )


def smelt(rules: "Rules", item: str, count: int | None, index: int) -> Action:
    recipe = rules.kb.smelts[item][index]
    n = 1 if count is None else count
    station = rules.furnace_station if rules.furnace_needed else None
    return Action(
        SMELT,
        item,
        n,
        (Slot.of(recipe.input, n),),
        n * recipe.count,
        1,
        station,
        fuel=float(n) if rules.fuel_needed else 0.0,
        recipe=index,
    )


def gather(rules: "Rules", source: Source, count: int | None) -> Action:
    n = 1 if count is None else count
    tool = tool_need(rules, source.tool_kind, source.min_tier) if source.tool_kind else None
    uses = tuple(Slot(name, (name,), each * n) for name, each in source.uses)
    return Action(source.kind, source.item, n, uses, n, 1, None, tool, layers=source.layers, origin=source.origin)


def dig(rules: "Rules", layer: int) -> Action:
    """One dig down from ``layer - 1`` to ``layer``."""
    return Action(
        DIG_DOWN,
        None,
        1,
        (),
        1,
        1,
        None,
        tool_need(rules, rules.kb.dig_down_kind, DIG_DOWN_TIER),
        layers=frozenset({layer - 1}),
        reaches=layer,
    )


def ways(rules: "Rules", item: str, count: int | None) -> Iterator[Action]:
    """Every action that makes ``item`` under the profile: each craft recipe, each smelt recipe, its source."""
    for index in range(len(rules.kb.crafts.get(item, ()))):
        yield craft(rules, item, count, index)
    for index in range(len(rules.kb.smelts.get(item, ()))):
        yield smelt(rules, item, count, index)
    source = rules.source(item)
    if source is not None:
        yield gather(rules, source, count)


def every_action(rules: "Rules") -> Iterator[Action]:
    """One batch of every action the profile allows: dig downs, crafts, smelts, then gathering (graph order)."""
    kb = rules.kb
    for layer in range(1, len(kb.layers) if rules.can_gather else 1):
        yield dig(rules, layer)
    for item, crafts in kb.crafts.items():
        for index in range(len(crafts)):
            yield craft(rules, item, None, index)
    for item, smelts in kb.smelts.items():
        for index in range(len(smelts)):
            yield smelt(rules, item, None, index)
    if rules.can_gather:
        for source in kb.sources.values():
            yield gather(rules, source, None)
