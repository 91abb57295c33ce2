"""The rule book: the one place where barsym's game rules are written down.

Every consumer (simulator, validator, verifier, symbolic and LLM decomposers,
grammar builder, prompts, crafting graph) asks these questions here instead of
answering them itself, so they cannot disagree:

- **Tools**: which items count as a tool of a kind and tier. Tiered tools are
  ``MATERIAL_KIND`` (``stone_pickaxe``, tier from ``tools.json``); a tool kind
  without tiers (``shears``) is the item of that name and meets any tier.
- **Batches**: crafting runs whole recipe batches: ``ceil(count / per_batch)``.
- **Which recipe a craft uses** (one documented rule, :meth:`Rules.fitting_recipe`):
  the first recipe, in the knowledge base's order, that the units at hand pay
  for in full with its station at hand; else the first whose ingredients are
  paid for (the station is what is missing); else the one with the fewest
  missing units (ties: the first). "At hand" is the inventory for the
  simulator and validator, and the subgoals for the verifier.
- **How units are taken** for an ingredient slot: from the slot's accepted items
  in order, mixing them freely (two purpur blocks and a pillar make slabs).
- **Stations**: recipes larger than 2x2 need a crafting table unless the profile
  puts a 3x3 grid at hand; smelting needs a furnace unless the profile says not.
- **Fuel**: burn values in items smelted, the order fuel is taken in, and what
  is never burned (items later steps need, the last station or tool).
- **Gathering**: whether the profile lets the agent mine, kill and dig at all.
- **Wear and break times** (what the execution worlds need): which of the
  things a step used is a tool that wears (:meth:`Rules.worn_tool`), how many
  uses breaking a block costs it (:meth:`Rules.wear`: 1, 2 for a sword, 0 for
  a block that breaks instantly), how many uses it has (minecraft-data's
  ``maxDurability``), and how many ticks a block takes to break
  (:meth:`Rules.break_ticks`: the game's formula from hardness, the tool's
  dig speed on the block's material and whether the tool can harvest it).

A :class:`Rules` is a knowledge base plus a rule profile (``survival`` by
default, ``crafting`` for Plancraft's tasks; both are data in ``rules.json``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from . import actions as _actions
from .actions import DIG_DOWN_TIER, Action
from .knowledge import Block, CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, Source, Tool


class _Kind(Protocol):
    @property
    def value(self) -> str: ...


class StepLike(Protocol):
    """What :meth:`Rules.step_action` reads of a plan step (barsym.model.Step; the rule book imports no model)."""

    @property
    def type(self) -> _Kind: ...
    @property
    def item(self) -> str | None: ...
    @property
    def count(self) -> int | None: ...


CRAFTING_TABLE = "crafting_table"
#: the game's damage divisors: a tool that can harvest the block breaks it 30 times slower than its
#: speed over the block's hardness; one that cannot (no drop) 100 times slower
HARVEST_DIVISOR, NO_HARVEST_DIVISOR = 30.0, 100.0
#: a sword loses 2 uses per block broken, every other tool 1 (Minecraft 1.16 item durability rules)
SWORD = "sword"
FURNACE = "furnace"
#: how many (item, count) answers of Rules.ways are kept before the cache starts over
WAYS_CACHE = 4096
#: fuel arithmetic tolerance: burn values such as 1.5 add up in floating point
EPSILON = 1e-9


class UnknownProfileError(ValueError):
    """A rule profile name the knowledge base does not define."""


def batches(count: int, per_batch: int) -> int:
    """Whole crafting runs needed for ``count`` units when one run makes ``per_batch``."""
    return -(-count // per_batch) if count > 0 else 0


@dataclass(frozen=True)
class RecipeFit:
    """How well the units at hand pay for ``batches`` runs of ``recipe``."""

    recipe: CraftRecipe
    batches: int
    taken: dict[str, int]  # units each item gives
    short: tuple[tuple[Ingredient, int, int], ...]  # (slot, need, have) for slots not paid in full
    station_missing: bool = False
    station: str | None = None  # the station the craft uses (a crafting table for a recipe larger than 2x2)

    @property
    def paid(self) -> bool:
        return not self.short

    @property
    def missing_units(self) -> int:
        return sum(need - have for _, need, have in self.short)


class Rules:
    """Game rules for one knowledge base under one profile; cheap to build, safe to share."""

    def __init__(self, kb: KnowledgeBase, profile: str | None = None):
        name = profile or kb.default_profile
        if name not in kb.profiles:
            raise UnknownProfileError(f"unknown rules {name!r}; choose one of: {', '.join(sorted(kb.profiles))}")
        self.kb = kb
        self.profile: RuleProfile = kb.profiles[name]
        self._fuel_rank = {key: i for i, key in enumerate(kb.fuel_preference)}
        self._ways: dict[tuple[str, int | None], tuple[Action, ...]] = {}

    @property
    def name(self) -> str:
        return self.profile.name

    # ---- the action schema (barsym.kb.actions): what every consumer reads ------------------------
    table_station, furnace_station, dig_tier = CRAFTING_TABLE, FURNACE, DIG_DOWN_TIER
    runs = staticmethod(batches)

    def action(self, kind: str, item: str | None, count: int | None = None, recipe: int = 0) -> Action:
        """What ``kind`` (craft, smelt, mine, kill, dig_down) of ``count`` ``item`` needs and makes (None: one batch).

        For a dig down, ``item`` is None and ``count`` is the layer it reaches.
        Raises KeyError for an action the knowledge base or the profile does not have.
        """
        if kind == _actions.CRAFT:
            return _actions.craft(self, item, count, recipe)
        if kind == _actions.SMELT:
            return _actions.smelt(self, item, count, recipe)
        if kind == _actions.DIG_DOWN:
            return self.dig(count or 1)
        source = self.source(item or "")
        if source is None or source.kind != kind:
            raise KeyError(f"{item} cannot be obtained by {kind!r} under the {self.name} rules")
        return _actions.gather(self, source, count)

    def step_action(self, step: StepLike) -> Action | None:
        """The action a plan step names (its kind, item and count), or None where the rule book has none (an
        unknown item, a way it is not obtained): one reading for the callers that list a step's needs."""
        try:
            return self.action(step.type.value, step.item, step.count)
        except (KeyError, IndexError, ValueError):
            return None

    def ways(self, item: str, count: int | None = None) -> tuple[Action, ...]:
        """Every action that makes ``item`` (its crafts, smelts, then its source), for ``count`` units (cached)."""
        key = (item, count)
        found = self._ways.get(key)
        if found is None:
            if len(self._ways) >= WAYS_CACHE:
                self._ways.clear()
            found = self._ways[key] = tuple(_actions.ways(self, item, count))
        return found

    def dig(self, layer: int) -> Action:
        return _actions.dig(self, layer)

    def every_action(self):
        return _actions.every_action(self)

    def choose_tool(
        self,
        kind: str,
        min_tier: int,
        held: Callable[[str], int] | None = None,
        cost: Callable[[str], float] | None = None,
        best: bool = False,
    ) -> str:
        """The one tool-choice policy: a held tool that serves, else :meth:`lowest_tool` (BAR's choice).

        Of the held tools, the lowest tier (what a planner names for a step, as
        the simulator picks), or with ``best`` the highest (a repair digging on
        with the pickaxe just made).
        """
        if held is not None:
            serving = [name for name in self.tools_for(kind, min_tier) if held(name) > 0]
            if serving:
                return serving[-1] if best else serving[0]
        return self.lowest_tool(kind, min_tier, cost)

    def tier(self, tool: str) -> int:
        """A tool's tier (a tierless tool such as shears, or anything else: the dig-down tier)."""
        info = self.kb.tools.get(tool)
        return info.tier if info is not None else DIG_DOWN_TIER

    @cached_property
    def layer_tiers(self) -> dict[int, int]:
        """Per layer, the pickaxe tier the resources first found there need (a layer with none: the one above)."""
        kind, tiers = self.kb.dig_down_kind, {0: DIG_DOWN_TIER}
        for layer in range(1, len(self.kb.layers)):
            found = [s.min_tier for s in self.kb.sources.values() if s.tool_kind == kind and min(s.layers) == layer]
            tiers[layer] = min(found) if found else tiers[layer - 1]
        return tiers

    def origin(self, item: str) -> Source | None:
        """Where a raw resource is found in the world, whatever the profile lets the agent do (None: nowhere)."""
        return self.kb.sources.get(item)

    def step_layers(self, step) -> frozenset[int] | None:
        """The layers a mine or kill ``step`` can happen on (its resource's); None for any other step."""
        if step.type.value not in ("mine", "kill") or not step.item or not self.kb.is_known(step.item):
            return None
        source = self.origin(self.kb.resolve(step.item))
        return source.layers if source is not None else None

    def next_layer(self, layer: int, move: str) -> int:
        """The layer after a ``dig_down`` or ``climb_up`` from ``layer`` (bounded by the surface and the deepest)."""
        if move == _actions.DIG_DOWN:
            return min(layer + 1, self.kb.deepest_layer)
        return max(layer - 1, 0) if move == "climb_up" else layer

    # ---- tools ---------------------------------------------------------------------
    @cached_property
    def tiered_kinds(self) -> frozenset[str]:
        return frozenset(t.kind for t in self.kb.tools.values())

    def tool(self, item: str) -> Tool | None:
        return self.kb.tools.get(item)

    def is_tool(self, item: str, kind: str, min_tier: int = 0) -> bool:
        """True when ``item`` can serve as a ``kind`` of tier ``min_tier`` or better."""
        tool = self.kb.tools.get(item)
        if tool is None:
            return item == kind and kind not in self.tiered_kinds  # shears: no tiers
        return tool.kind == kind and tool.tier >= min_tier

    def tools_for(self, kind: str, min_tier: int) -> list[str]:
        """Every tool that can serve, lowest tier first (a tierless kind: the item itself)."""
        if kind not in self.tiered_kinds:
            return [kind]
        return [
            t.name
            for t in sorted(self.kb.tools.values(), key=lambda t: (t.tier, t.name))
            if t.kind == kind and t.tier >= min_tier
        ]

    def lowest_tool(self, kind: str, min_tier: int, cost: Callable[[str], float] | None = None) -> str:
        """BAR's choice: the lowest tier that can do the job, then the cheapest, then by name."""
        options = self.tools_for(kind, min_tier)
        if not options:
            raise KeyError(f"no {kind} of tier {self.kb.tier_name(min_tier)} or better exists")
        tier = {name: (self.kb.tools[name].tier if name in self.kb.tools else 0) for name in options}
        return min(options, key=lambda n: (tier[n], cost(n) if cost else 0.0, n))

    def best_held_tool(self, kind: str, min_tier: int, held: Callable[[str], int]) -> str | None:
        """The lowest-tier held tool that can serve, or None."""
        return next((name for name in self.tools_for(kind, min_tier) if held(name) > 0), None)

    def compare_tools(self, a: str, b: str) -> int:
        """-1, 0 or 1 as tool ``a`` is of a lower, equal or higher tier than ``b`` (same kind; tierless: equal)."""

        def kind_tier(name: str) -> tuple[str, int]:
            tool = self.kb.tools.get(name)
            if tool is not None:
                return tool.kind, tool.tier
            if (
                name in self.kb.items
                and name not in self.tiered_kinds
                and any(s.tool_kind == name for s in self.kb.sources.values())
            ):
                return name, 0
            raise KeyError(f"not a tool: {name}")

        (ka, ta), (kb_, tb) = kind_tier(a), kind_tier(b)
        if ka != kb_:
            raise ValueError(f"{a} and {b} are different kinds of tool ({ka}, {kb_})")
        return (ta > tb) - (ta < tb)

    def is_persistent(self, item: str) -> bool:
        """Stations and tools are used, not consumed."""
        return item in self.kb.stations or item in self.kb.tools

    @property
    def generic_names(self) -> bool:
        """Whether ``logs`` / ``planks`` stand for any wood type (BAR) or every item is concrete (Plancraft)."""
        return self.profile.generic_names

    # ---- gathering -----------------------------------------------------------------
    @property
    def can_gather(self) -> bool:
        return self.profile.gather

    @property
    def can_climb(self) -> bool:
        """Whether a ``climb up`` step is allowed (planners still avoid it where BAR's order works)."""
        return self.profile.gather and self.profile.climb

    def source(self, item: str) -> Source | None:
        """Where a raw resource comes from, or None (always None when the profile forbids gathering)."""
        return self.kb.sources.get(item) if self.profile.gather else None

    @staticmethod
    def gather_uses(source: Source, count: int) -> dict[str, int]:
        """What gathering ``count`` units consumes: a bucket per water_bucket, a bottle per honey_bottle."""
        return {name: n * count for name, n in source.uses}

    def producers(self, item: str) -> list[str]:
        """Action kinds that make ``item`` under this profile: craft, smelt, mine, kill."""
        return [kind for kind in self.kb.producers(item) if kind in ("craft", "smelt") or self.profile.gather]

    # ---- recipes -------------------------------------------------------------------
    @staticmethod
    def take(ingredient: Ingredient | _actions.Slot, need: int, held: Mapping[str, int], taken: dict[str, int]) -> int:
        """Allocate ``need`` units of a slot from ``held`` into ``taken`` (mixing items); return the shortfall."""
        for name in ingredient.accepts:
            if need == 0:
                break
            free = held.get(name, 0) - taken.get(name, 0)
            if free > 0:
                grab = min(free, need)
                taken[name] = taken.get(name, 0) + grab
                need -= grab
        return need

    def needs_table(self, recipe: CraftRecipe) -> bool:
        """A recipe larger than the 2x2 inventory grid needs a crafting table (unless one is always at hand)."""
        return recipe.needs_table and not self.profile.table_at_hand

    def fit(self, recipe: CraftRecipe, count: int, held: Mapping[str, int]) -> RecipeFit:
        runs = batches(count, recipe.count)
        taken: dict[str, int] = {}
        short = []
        for ingredient in recipe.ingredients:
            need = runs * ingredient.count
            missing = self.take(ingredient, need, held, taken)
            if missing:
                short.append((ingredient, need, need - missing))
        table = CRAFTING_TABLE if self.needs_table(recipe) else None
        missing = runs > 0 and table is not None and held.get(CRAFTING_TABLE, 0) == 0
        return RecipeFit(recipe, runs, taken, tuple(short), missing, table)

    def fitting_recipe(
        self, item: str, count: int, held: Mapping[str, int], recipe: int | None = None
    ) -> RecipeFit | None:
        """Which recipe crafting ``count`` ``item`` uses with ``held`` at hand (the rule in the module doc).

        ``recipe`` pins one (a step's ``recipe``): that one is used, paid for or not; None when the item has
        no recipe of that number."""
        recipes = self.kb.crafts.get(item, ())
        if recipe is not None:
            return self.fit(recipes[recipe], count, held) if recipe < len(recipes) else None
        if not recipes:
            return None
        paid = fewest = None
        for each in recipes:
            fit = self.fit(each, count, held)
            if fit.paid:
                if not fit.station_missing:
                    return fit
                paid = paid or fit
            elif fewest is None or fit.missing_units < fewest.missing_units:  # the first of equals stays
                fewest = fit
        return paid or fewest

    def fitting_action(
        self, item: str, count: int, held: Mapping[str, int], recipe: int | None = None
    ) -> Action | None:
        """The craft :meth:`fitting_recipe` picks (or ``recipe``), as an action of the schema (None: no recipe)."""
        fit = self.fitting_recipe(item, count, held, recipe)
        return None if fit is None else _actions.craft(self, item, count, self.kb.crafts[item].index(fit.recipe))

    def smelt_recipe(self, item: str, count: int, held: Mapping[str, int], recipe: int | None = None):
        """(recipe, taken, shortfall) for smelting: the first recipe whose input is at hand, else the first
        (``recipe``: that one; None when there is no such recipe)."""
        recipes = self.kb.smelts.get(item, ())
        if recipe is not None:
            recipes = recipes[recipe : recipe + 1]
        if not recipes:
            return None
        for chosen in recipes:
            taken: dict[str, int] = {}
            if self.take(chosen.input, count, held, taken) == 0:
                return chosen, taken, 0
        taken = {}
        return recipes[0], taken, self.take(recipes[0].input, count, held, taken)

    def fitting_smelt(self, item: str, count: int, held: Mapping[str, int], recipe: int | None = None) -> Action | None:
        """The smelt :meth:`smelt_recipe` picks (or ``recipe``), as an action (None: ``item`` is not smelted so)."""
        chosen = self.smelt_recipe(item, count, held, recipe)
        return None if chosen is None else _actions.smelt(self, item, count, self.kb.smelts[item].index(chosen[0]))

    def recipe_count(self, kind: str, item: str) -> int:
        """How many recipes of ``kind`` (craft, smelt) make ``item``: a step may pin one by its number below it."""
        return len((self.kb.crafts if kind == _actions.CRAFT else self.kb.smelts).get(item, ()))

    def recipe_number(self, kind: str, item: str, recipe: object) -> int:
        """The 0-based number of one of ``item``'s recipes of ``kind`` (what :attr:`Step.recipe` names)."""
        return list((self.kb.crafts if kind == _actions.CRAFT else self.kb.smelts)[item]).index(recipe)

    def recipe_id(self, kind: str, item: str, index: int) -> str:
        """A recipe's name, as the crafting graph writes it: ``craft:iron_ingot#1`` (kind, item, 0-based index)."""
        return f"{kind}:{item}#{index}"

    def recipe_inputs(self, kind: str, item: str, index: int) -> dict[str, int]:
        """What one batch of a recipe takes, slot by slot: ``{"planks": 3, "stick": 2}`` (a family by its name)."""
        if kind == _actions.SMELT:
            source = self.kb.smelts[item][index].input
            return {source.label.lstrip("#"): source.count}
        out: dict[str, int] = {}
        for ingredient in self.kb.crafts[item][index].ingredients:
            label = ingredient.label.lstrip("#")
            out[label] = out.get(label, 0) + ingredient.count
        return out

    def smelt_ticks(self, item: str, count: int, held: Mapping[str, int]) -> int:
        """Ticks the furnace takes for ``count`` ``item`` (one after another; the recipe :meth:`smelt_recipe` picks)."""
        chosen = self.smelt_recipe(item, count, held)
        return count * (chosen[0].ticks if chosen else 200)

    # ---- wear and break times ----------------------------------------------------------
    def durability(self, item: str) -> int | None:
        """Uses a tool has before it breaks (``maxDurability``); None for what does not wear."""
        return self.kb.durability.get(item)

    def worn_tool(self, used) -> str | None:
        """Which of the things a step used (its tools and stations) wears out: the one with a durability."""
        return next((name for name in sorted(used) if name in self.kb.durability), None)

    def block(self, name: str) -> Block:
        return self.kb.blocks[name]

    def can_harvest(self, block: Block, tool: str | None) -> bool:
        """Whether breaking ``block`` with ``tool`` (None: the hand) drops anything."""
        return not block.harvest_tools or tool in block.harvest_tools

    def break_ticks(self, block_name: str, tool: str | None) -> int:
        """Ticks to break one block: the game's damage per tick is speed / hardness / 30 (/ 100 without harvest).

        ``speed`` is the tool's dig speed on the block's material (materials.json;
        1 for the hand and for a tool that is not made for it). Damage of 1 or
        more per tick breaks the block at once: 0 ticks.
        """
        block = self.kb.blocks[block_name]
        if block.hardness < 0:
            raise ValueError(f"{block_name} cannot be broken")
        if block.hardness == 0:
            return 0
        speed = self.kb.dig_speeds.get(block.material or "", {}).get(tool, 1.0) if tool else 1.0
        divisor = HARVEST_DIVISOR if self.can_harvest(block, tool) else NO_HARVEST_DIVISOR
        damage = speed / block.hardness / divisor
        return 0 if damage >= 1 else math.ceil(1 / damage - EPSILON)

    def breaks_block(self, gather: Action) -> bool:
        """Whether one unit of a ``gather`` action (mine, kill) breaks its block.

        Not when the unit is filled into an item (a bucket at water or lava, a
        bottle at a bee nest) or taken from a mob (milk): that is one use of
        the item on the block or mob.
        """
        block = self.kb.blocks.get(gather.origin or "")
        return not gather.needs and block is not None and block.hardness >= 0

    def wear(self, tool: str | None, block_name: str | None) -> int:
        """Uses that breaking one ``block_name`` costs ``tool``: 0 (hand, instant break), 2 (a sword), else 1.

        ``block_name`` None is a use of the tool on a block or mob that breaks
        nothing (shears on a bee nest): 1 for a tool that wears.
        """
        if tool is None or tool not in self.kb.durability:
            return 0
        if block_name is None:
            return 1
        if self.break_ticks(block_name, tool) == 0:
            return 0
        info = self.kb.tools.get(tool)
        return 2 if info is not None and info.kind == SWORD else 1

    # ---- stations and fuel -----------------------------------------------------------
    @property
    def furnace_needed(self) -> bool:
        return self.profile.furnace_needed

    @property
    def fuel_needed(self) -> bool:
        return self.profile.fuel_needed

    @cached_property
    def fuel_items(self) -> tuple[str, ...]:
        """Every item that burns, by name (what a smelt's fuel slot accepts)."""
        return tuple(sorted(n for n, v in self.kb.fuels.items() if v > 0 and n in self.kb.items))

    @cached_property
    def tool_items(self) -> tuple[str, ...]:
        """Every tiered tool the knowledge base knows, by name (what a step may name as its tool)."""
        return tuple(self.kb.tools)

    @cached_property
    def preferred_fuels(self) -> tuple[str, ...]:
        """The concrete items of the furnace's order (``fuels.json`` preference): what plans name as fuel."""
        return tuple(f for f in self.kb.fuel_preference if f in self.kb.items and self.fuel_value(f) > 0)

    def fuel_value(self, item: str) -> float:
        """Items one unit of ``item`` smelts (0: not a fuel)."""
        return self.kb.fuels.get(item, 0.0)

    def fuel_units(self, item: str, burn: float) -> int:
        """Units of fuel ``item`` that burn for at least ``burn`` items (leftover burn is lost)."""
        value = self.fuel_value(item)
        if value <= 0:
            raise ValueError(f"{item} is not a fuel")
        return math.ceil(burn / value - EPSILON) if burn > EPSILON else 0

    def fuel_order(self, name: str) -> tuple[int, float, str]:
        """Sort key: the order fuel is taken from the inventory (``fuels.json`` preference, then value)."""
        rank = self._fuel_rank.get(name)
        if rank is None:
            rank = min(
                (
                    r
                    for key, r in self._fuel_rank.items()
                    if key.startswith("#") and name in self.kb.families.get(key[1:], ())
                ),
                default=len(self._fuel_rank),
            )
        return (rank, -self.fuel_value(name), name)

    def pick_fuel(
        self, held: Mapping[str, int], burn: float, reserve: Mapping[str, int]
    ) -> tuple[dict[str, int], float]:
        """Greedy fuel choice in preference order, never touching what later steps need.

        The last crafting table, furnace or tool is never burned: a plan that
        makes one means to use it.
        """
        fuel: dict[str, int] = {}
        total = 0.0
        for name in sorted((n for n in held if self.fuel_value(n) > 0), key=self.fuel_order):
            if total >= burn:
                break
            keep = 1 if self.is_persistent(name) else 0
            free = held[name] - max(reserve.get(name, 0), keep)
            if free <= 0:
                continue
            use = min(free, self.fuel_units(name, burn - total))
            fuel[name] = use
            total += use * self.fuel_value(name)
        return fuel, total


def rules_for(kb: KnowledgeBase, rules: "Rules | str | None" = None) -> Rules:
    """A :class:`Rules` from a Rules, a profile name, or None (the default profile)."""
    if isinstance(rules, Rules):
        return rules
    return Rules(kb, rules)
