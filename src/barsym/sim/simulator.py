"""Play steps forward: the single source of truth for "can this step run here".

``transition(step, state)`` returns either a :class:`Failure` or the full
:class:`Transition` (new state, what was consumed, produced and used), which
the validator needs for waste accounting. ``applicable`` and ``apply`` are the
small pure API on top of it.

Semantics (BAR's conventions, Minecraft 1.16 rules):
- ``count`` is the number of items needed; crafting runs whole recipe batches.
- recipes larger than 2x2 need a crafting table; smelting needs a furnace and
  fuel worth at least one item per smelted item (leftover burn is lost).
- mining needs the resource's layer and a tool of the right kind and tier;
  ``dig down`` needs a pickaxe and goes one layer deeper.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..kb import Ingredient, KnowledgeBase, UnknownItemError
from ..model import Step, StepType
from .failure import Code, Failure, StepFailed
from .state import State

_EMPTY: Mapping[str, int] = MappingProxyType({})
CRAFTING_TABLE = "crafting_table"
FURNACE = "furnace"


@dataclass(frozen=True)
class Transition:
    state: State
    item: str | None = None  # resolved item the step makes
    produced: Mapping[str, int] = field(default_factory=dict)
    consumed: Mapping[str, int] = field(default_factory=dict)
    fuel: Mapping[str, int] = field(default_factory=dict)
    used: frozenset[str] = frozenset()  # tools and stations the step relied on
    notes: tuple[str, ...] = field(default=())


class Simulator:
    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._fuel_rank = {name: i for i, name in enumerate(kb.fuel_preference)}

    # ---- public pure API ----------------------------------------------------
    def applicable(self, step: Step, state: State) -> bool:
        return isinstance(self.transition(step, state), Transition)

    def apply(self, step: Step, state: State, reserve: Mapping[str, int] = _EMPTY) -> State:
        result = self.transition(step, state, reserve)
        if isinstance(result, Failure):
            raise StepFailed(result)
        return result.state

    def transition(self, step: Step, state: State, reserve: Mapping[str, int] = _EMPTY) -> Transition | Failure:
        tool = None
        if step.tool is not None:
            tool = self._resolve(step.tool)
            if isinstance(tool, Failure):
                return tool
        if step.type is StepType.DIG_DOWN:
            return self._dig_down(state, tool)
        item = self._resolve(step.item or "")
        if isinstance(item, Failure):
            return item
        assert step.count is not None
        if step.type is StepType.CRAFT:
            return self._craft(item, step.count, state)
        if step.type is StepType.SMELT:
            return self._smelt(item, step.count, state, reserve)
        return self._gather(step.type, item, step.count, tool, state)

    # ---- helpers --------------------------------------------------------------
    def _resolve(self, name: str) -> str | Failure:
        try:
            return self.kb.resolve(name)
        except UnknownItemError as exc:
            return Failure(Code.UNKNOWN_ITEM, str(exc), item=name, suggestions=tuple(exc.suggestions))

    def _take(self, ingredient: Ingredient, need: int, state: State, taken: dict[str, int]) -> int:
        """Allocate ``need`` units from the inventory into ``taken``; return the shortfall."""
        for name in ingredient.accepts:
            if need == 0:
                break
            free = state.count(name) - taken.get(name, 0)
            if free > 0:
                grab = min(free, need)
                taken[name] = taken.get(name, 0) + grab
                need -= grab
        return need

    def _craft(self, item: str, count: int, state: State) -> Transition | Failure:
        recipes = self.kb.crafts.get(item)
        if not recipes:
            return self._not_made_by(item, "craft")
        best: tuple[int, Failure] | None = None
        no_table: Transition | None = None
        for recipe in recipes:
            batches = math.ceil(count / recipe.count)
            taken: dict[str, int] = {}
            missing = None
            total_short = 0
            for ingredient in recipe.ingredients:
                need = batches * ingredient.count
                short = self._take(ingredient, need, state, taken)
                if short:
                    total_short += short
                    if missing is None:
                        had = need - short
                        missing = Failure(
                            Code.MISSING_INGREDIENT,
                            f"crafting {count} {item} ({batches} x {recipe.count}) needs {need} {ingredient.label}, "
                            f"only {had} at hand",
                            item=ingredient.label.lstrip("#"), needed=need, had=had,
                        )
            if missing is not None:
                if best is None or total_short < best[0]:
                    best = (total_short, missing)
                continue
            done = Transition(
                state.changed(add={item: batches * recipe.count}, remove=taken),
                item=item, produced={item: batches * recipe.count}, consumed=taken,
                used=frozenset({CRAFTING_TABLE}) if recipe.needs_table else frozenset(),
            )
            if not recipe.needs_table or state.count(CRAFTING_TABLE) > 0:
                return done
            no_table = no_table or done
        if no_table is not None:
            return Failure(
                Code.MISSING_STATION,
                f"crafting {item} needs a crafting_table (its recipe is larger than the 2x2 grid); none at hand",
                item=CRAFTING_TABLE, needed=1, had=0,
            )
        assert best is not None
        return best[1]

    def _fuel_order(self, name: str) -> tuple[int, float, str]:
        rank = self._fuel_rank.get(name)
        if rank is None:
            rank = min((r for key, r in self._fuel_rank.items()
                        if key.startswith("#") and name in self.kb.families.get(key[1:], ())), default=len(self._fuel_rank))
        return (rank, -self.kb.fuel_value(name), name)

    def _smelt(self, item: str, count: int, state: State, reserve: Mapping[str, int]) -> Transition | Failure:
        recipes = self.kb.smelts.get(item)
        if not recipes:
            return self._not_made_by(item, "smelt")
        if state.count(FURNACE) == 0:
            return Failure(Code.MISSING_STATION, f"smelting {item} needs a furnace; none at hand", item=FURNACE, needed=1, had=0)
        taken: dict[str, int] = {}
        recipe = recipes[0]
        for candidate in recipes:
            trial: dict[str, int] = {}
            if self._take(candidate.input, count, state, trial) == 0:
                recipe, taken = candidate, trial
                break
        else:
            have = count - self._take(recipe.input, count, state, {})
            return Failure(
                Code.MISSING_INGREDIENT, f"smelting {count} {item} needs {count} {recipe.input.label}, only {have} at hand",
                item=recipe.input.label, needed=count, had=have,
            )
        after_input = state.changed(remove=taken)
        fuel, burn = self._pick_fuel(after_input, count, reserve)
        if burn < count:
            spare = burn
            total = sum(self.kb.fuel_value(n) * c for n, c in after_input.counts.items())
            held_back = ""
            if total >= count:
                needed_later = {n: reserve[n] for n in reserve if self.kb.fuel_value(n) > 0 and after_input.count(n)}
                held_back = " (other fuel at hand is needed by later steps: " + ", ".join(
                    f"{c} {n}" for n, c in sorted(needed_later.items())) + ")"
            return Failure(
                Code.INSUFFICIENT_FUEL,
                f"smelting {count} {item} needs fuel for {count} items; spare fuel at hand burns for {spare:g}{held_back}",
                item="fuel", needed=count, had=spare,
            )
        consumed = dict(taken)
        for name, n in fuel.items():
            consumed[name] = consumed.get(name, 0) + n
        return Transition(
            state.changed(add={item: count}, remove=consumed), item=item, produced={item: count},
            consumed=consumed, fuel=fuel, used=frozenset({FURNACE}),
        )

    def _pick_fuel(self, state: State, count: int, reserve: Mapping[str, int]) -> tuple[dict[str, int], float]:
        """Greedy fuel choice in preference order, never touching what later steps need.

        The last crafting table, furnace or wooden tool is never burned: a plan
        that makes one means to use it.
        """
        fuel: dict[str, int] = {}
        burn = 0.0
        candidates = sorted((n for n in state.counts if self.kb.fuel_value(n) > 0), key=self._fuel_order)
        for name in candidates:
            if burn >= count:
                break
            value = self.kb.fuel_value(name)
            keep = 1 if name in self.kb.stations or name in self.kb.tools else 0
            free = state.count(name) - max(reserve.get(name, 0), keep)
            if free <= 0:
                continue
            use = min(free, math.ceil((count - burn) / value - 1e-9))
            fuel[name] = use
            burn += use * value
        return fuel, burn

    def _gather(self, kind: StepType, item: str, count: int, tool: str | None, state: State) -> Transition | Failure:
        source = self.kb.sources.get(item)
        verb = kind.value
        if source is None or source.kind != verb:
            return self._not_made_by(item, verb)
        if state.layer not in source.layers:
            where = ", ".join(self.kb.layer_name(layer) for layer in sorted(source.layers))
            hint = "dig down first" if state.layer < min(source.layers) else "the agent cannot climb back up"
            return Failure(
                Code.WRONG_LAYER,
                f"{item} is found on layer {where}; the agent is on layer {self.kb.layer_name(state.layer)} ({hint})",
                item=item, needed=min(source.layers), had=state.layer,
            )
        used: set[str] = set()
        if tool is not None and state.count(tool) == 0:
            return Failure(Code.MISSING_TOOL, f"the step names {tool} as its tool, but none is at hand", item=tool, needed=1, had=0)
        if source.tool_kind is not None:
            chosen = self._pick_tool(source.tool_kind, source.min_tier, tool, state, f"{verb} {item}")
            if isinstance(chosen, Failure):
                return chosen
            used.add(chosen)
        elif tool is not None:
            used.add(tool)
        return Transition(state.changed(add={item: count}), item=item, produced={item: count}, used=frozenset(used))

    def _pick_tool(self, kind: str, min_tier: int, named: str | None, state: State, doing: str) -> str | Failure:
        kb = self.kb
        if named is not None:
            info = kb.tool(named)
            if info is None or info.kind != kind:
                if info is None and named == kind:
                    return named
                return Failure(Code.MISSING_TOOL, f"{doing} needs a {kind}; {named} is not one", item=kind, needed=min_tier, had=None)
            if info.tier < min_tier:
                return Failure(
                    Code.TOOL_TIER_TOO_LOW,
                    f"{doing} needs a {kind} of tier {kb.tier_name(min_tier)} or better; {named} is {kb.tier_name(info.tier)}",
                    item=named, needed=min_tier, had=info.tier,
                )
            return named
        held = [t for t in kb.tools.values() if t.kind == kind and state.count(t.name) > 0]
        if kind not in {t.kind for t in kb.tools.values()}:
            if state.count(kind) > 0:
                return kind
            return Failure(Code.MISSING_TOOL, f"{doing} needs {kind}; none at hand", item=kind, needed=1, had=0)
        good = sorted((t for t in held if t.tier >= min_tier), key=lambda t: (t.tier, t.name))
        if good:
            return good[0].name
        if held:
            top = max(held, key=lambda t: t.tier)
            return Failure(
                Code.TOOL_TIER_TOO_LOW,
                f"{doing} needs a {kind} of tier {kb.tier_name(min_tier)} or better; the best at hand is {top.name}",
                item=top.name, needed=min_tier, had=top.tier,
            )
        return Failure(
            Code.MISSING_TOOL, f"{doing} needs a {kb.tier_name(min_tier)} {kind} or better; none at hand",
            item=f"{kb.tier_name(min_tier)}_{kind}", needed=1, had=0,
        )

    def _dig_down(self, state: State, tool: str | None) -> Transition | Failure:
        kind = self.kb.dig_down_kind
        if tool is not None and state.count(tool) == 0:
            return Failure(Code.MISSING_TOOL, f"dig down names {tool} as its tool, but none is at hand", item=tool, needed=1, had=0)
        chosen = self._pick_tool(kind, 1, tool, state, "dig down")
        if isinstance(chosen, Failure):
            return chosen
        if state.layer >= self.kb.deepest_layer:
            return Transition(state, used=frozenset({chosen}), notes=("already on the deepest layer: dig down changes nothing",))
        return Transition(State(state.inventory, state.layer + 1), used=frozenset({chosen}))

    def _not_made_by(self, item: str, verb: str) -> Failure:
        ways = self.kb.producers(item)
        if ways:
            source = self.kb.sources.get(item)
            detail = f" ({source.kind} {source.origin})" if source and source.kind in ways else ""
            hint = f"it is obtained by {' or '.join(ways)}{detail}"
        else:
            hint = "no recipe, resource or mob drop makes it in this knowledge base"
        return Failure(Code.NOT_OBTAINABLE, f"{item} cannot be obtained by '{verb}': {hint}", item=item)

