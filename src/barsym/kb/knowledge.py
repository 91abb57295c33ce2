"""The knowledge base: what exists, how it is made, and where it is found.

Everything is keyed by item *name* (ids change between game versions). The
objects are plain frozen dataclasses so the whole knowledge base is stored as
JSON for the warm-start cache (:mod:`.cache`) and can be shared read-only by
every component.

Generic names. Plans say ``logs`` and ``planks`` for "any wood type". A generic
name is an item of its own in the inventory; an ingredient accepts it wherever
it accepts any member of its family, so ``mine logs`` + ``craft planks`` +
``craft oak_stairs`` is a valid plan, as in the game where the agent just picks
oak logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .world_params import WorldModel


#: BAR's game version: barsym's hand-written data is written for it, and every command and call defaults to it
DEFAULT_VERSION = "1.16.5"


class UnknownItemError(KeyError, ValueError):
    """A name that is neither an item, a generic family, nor an alias (``absent_from``: an item of 1.16.5
    that the knowledge base's release lacks).

    A ValueError (a bad value given, as the API's other argument errors are) and, as it always was, a
    KeyError (a name not found), so code catching either keeps working."""

    def __init__(self, name: str, suggestions: list[str], absent_from: str | None = None):
        super().__init__(name)
        self.name = name
        self.suggestions = suggestions
        self.absent_from = absent_from

    def __str__(self) -> str:
        if self.absent_from is not None:
            return f"{self.name!r} is not an item in Minecraft {self.absent_from} (it is in 1.16.5)"
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        shown = (
            repr(self.name) if len(self.name) <= _SHOWN else f"{self.name[:_SHOWN]!r}... ({len(self.name)} characters)"
        )
        return f"unknown item {shown}{hint}"  # a 10 MB name is not echoed back whole


#: the longest item name quoted back in a message (the longest real one is under 40 characters)
_SHOWN = 60


@dataclass(frozen=True, slots=True)
class Ingredient:
    """``count`` units of any item in ``accepts`` (listed in consumption order)."""

    label: str
    accepts: tuple[str, ...]
    count: int = 1

    def __contains__(self, item: str) -> bool:
        return item in self.accepts


@dataclass(frozen=True, slots=True)
class CraftRecipe:
    result: str
    count: int
    ingredients: tuple[Ingredient, ...]
    width: int
    height: int

    @property
    def needs_table(self) -> bool:
        """Recipes larger than the 2x2 inventory grid need a crafting table."""
        return self.width > 2 or self.height > 2


@dataclass(frozen=True, slots=True)
class SmeltRecipe:
    result: str
    input: Ingredient
    count: int = 1
    ticks: int = 200  # cooking time of one item (smelting.json's cooking_time; 200 for every furnace recipe)


@dataclass(frozen=True, slots=True)
class Block:
    """A block's mining facts from minecraft-data: what the execution world needs to time a break.

    ``material`` names the entry of ``materials.json`` that lists which tools
    dig it faster and how much; ``harvest_tools`` are the tools that make it
    drop anything (empty: the hand will do). ``hardness`` -1: never broken
    (minecraft-data's ``diggable`` false: bedrock, fluids).
    """

    name: str
    hardness: float
    material: str | None = None
    harvest_tools: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Source:
    """A raw resource: mined from a block, or dropped by a mob (``kind='kill'``)."""

    item: str
    kind: str  # "mine" | "kill"
    origin: str  # block or mob name
    layers: frozenset[int]
    tool_kind: str | None
    min_tier: int
    uses: tuple[tuple[str, int], ...] = ()  # items each unit consumes (the bucket a water_bucket is)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    kind: str
    tier: int


@dataclass(frozen=True, slots=True)
class RuleProfile:
    """Which game rules hold (``data/recipes/rules.json``); :class:`barsym.kb.rules.Rules` applies them."""

    name: str
    gather: bool = True  # raw resources can be mined and mobs killed; the agent digs down
    table_at_hand: bool = False  # a 3x3 crafting grid is always available
    furnace_needed: bool = True
    fuel_needed: bool = True
    generic_names: bool = True  # plans may name the generic families (logs, planks)
    climb: bool = True  # the agent may climb back up a layer
    about: str = ""
    durability: bool = False  # a tool used beyond its uses is an error, and repairs and plans add copies


@dataclass(frozen=True)
class KnowledgeBase:
    version: str
    items: frozenset[str]
    generic: dict[str, str]  # generic name -> default member
    families: dict[str, frozenset[str]]  # generic name -> members
    crafts: dict[str, tuple[CraftRecipe, ...]]
    smelts: dict[str, tuple[SmeltRecipe, ...]]
    fuels: dict[str, float]
    fuel_preference: tuple[str, ...]
    sources: dict[str, Source]
    tools: dict[str, Tool]
    tier_names: dict[int, str]
    dig_down_kind: str
    layers: tuple[str, ...]
    aliases: dict[str, str]
    dialects: dict[str, dict[str, str]] = field(default_factory=dict)
    prefer: tuple[str, ...] = ()  # picked first where a recipe accepts several items
    stations: frozenset[str] = field(default=frozenset({"crafting_table", "furnace"}))
    profiles: dict[str, RuleProfile] = field(default_factory=lambda: {"survival": RuleProfile("survival")})
    default_profile: str = "survival"
    loot: dict[str, str] = field(default_factory=dict)  # loot-only item -> where it is found
    # ---- what the execution worlds need (minecraft-data facts, world.json parameters) ----
    blocks: dict[str, Block] = field(default_factory=dict)
    dig_speeds: dict[str, dict[str, float]] = field(default_factory=dict)  # material -> tool -> speed
    durability: dict[str, int] = field(default_factory=dict)  # item -> uses (items[].maxDurability)
    world: "WorldModel | None" = None
    # ---- a release other than 1.16.5 (barsym.kb.versions); empty for 1.16.5 ----
    item_ids: dict[str, tuple[str, int]] = field(default_factory=dict)  # before 1.13: name -> (game name, metadata)
    block_ids: dict[str, tuple[str, int]] = field(default_factory=dict)  # likewise for blocks
    absent: frozenset[str] = frozenset()  # 1.16.5's items this release lacks: refused with the reason
    ore_variants: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a mined block -> others dropping the same
    data_set: str = ""  # the ArticData release its tags and smelting recipes come from ("" : the version's own)
    layer_y: dict[str, int] = field(default_factory=dict)  # a layer's y in this release, where it moved (bots)
    # ---- what players call items (aliases.json's "players"; barsym parse and its training data) ----
    player_names: dict[str, str] = field(default_factory=dict)  # "workbench" -> crafting_table

    # ---- names -------------------------------------------------------------
    def resolve(self, name: str, dialect: str | None = None) -> str:
        """Canonical name for an item, generic family or alias; raise with suggestions.

        ``dialect`` (e.g. ``"deps"``) applies a task set's own renamings first,
        for old names that are also real 1.16 items with another meaning.
        """
        key = name.strip().lower().replace(" ", "_")
        if key.startswith("minecraft:"):
            key = key[len("minecraft:") :]
        if dialect is not None:
            if dialect not in self.dialects:
                raise KeyError(f"unknown name dialect {dialect!r}; known: {', '.join(sorted(self.dialects))}")
            if key in self.dialects[dialect]:
                return self.dialects[dialect][key]
        if key in self.items:
            return key
        if key in self.aliases:
            return self.aliases[key]
        if key in self.absent:
            raise UnknownItemError(key, [], absent_from=self.version)
        raise UnknownItemError(name, self.suggest(key))

    def suggest(self, name: str, n: int = 3) -> list[str]:
        if len(name) > 4 * _SHOWN:  # no item is called anything like it; difflib would only take its time
            return []
        import difflib  # only for a name that is not an item: not loaded by every command

        pool = self._name_pool
        close = difflib.get_close_matches(name, pool, n=n, cutoff=0.6)
        if not close:
            close = sorted(p for p in pool if name and (name in p))[:n]
        return close

    @cached_property
    def block_drops(self) -> dict[str, str]:
        """Block -> the one item mining it gives, where they differ (stone -> cobblestone, diamond_ore ->
        diamond): the sources inverted; a block that gives several items (gravel: gravel, flint) is left out.
        What a sentence's "mine the stone" means (``barsym parse``)."""
        given: dict[str, set[str]] = {}
        for item, source in self.sources.items():
            if source.kind == "mine":
                given.setdefault(source.origin, set()).add(item)
        return {block: next(iter(items)) for block, items in given.items() if len(items) == 1 and block not in items}

    @cached_property
    def _name_pool(self) -> list[str]:
        return sorted(self.items | set(self.aliases))

    def is_known(self, name: str) -> bool:
        try:
            self.resolve(name)
        except UnknownItemError:
            return False
        return True

    # ---- satisfaction ------------------------------------------------------
    def acceptable(self, wanted: str) -> tuple[str, ...]:
        """Items that count as ``wanted`` (the item, its members, generic stand-ins)."""
        cached = self._acceptable_cache.get(wanted)
        if cached is None:
            found = [wanted]
            found += sorted(self.families.get(wanted, ()))
            found += [g for g, members in self.families.items() if wanted in members]
            cached = tuple(dict.fromkeys(found))
            self._acceptable_cache[wanted] = cached
        return cached

    @cached_property
    def _acceptable_cache(self) -> dict[str, tuple[str, ...]]:
        return {}

    # ---- production --------------------------------------------------------
    def producers(self, item: str) -> list[str]:
        """Action kinds that make ``item``: craft, smelt, mine, kill."""
        kinds = []
        if item in self.crafts:
            kinds.append("craft")
        if item in self.smelts:
            kinds.append("smelt")
        source = self.sources.get(item)
        if source is not None:
            kinds.append(source.kind)
        return kinds

    def fuel_value(self, item: str) -> float:
        return self.fuels.get(item, 0.0)

    def tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def tier_name(self, tier: int) -> str:
        return self.tier_names.get(tier, str(tier))

    def layer_name(self, layer: int) -> str:
        if 0 <= layer < len(self.layers):
            return f"{layer} ({self.layers[layer]})"
        return str(layer)

    @property
    def deepest_layer(self) -> int:
        return len(self.layers) - 1
