"""Play steps forward: the single source of truth for "can this step run here".

``transition(step, state)`` returns either a :class:`Failure` or the full
:class:`Transition` (new state, what was consumed, produced and used), which
the validator needs for waste accounting. ``applicable`` and ``apply`` are the
small pure API on top of it.

Semantics (BAR's conventions, Minecraft 1.16 rules; every rule itself, such as
which recipe a craft uses or which fuel burns, is asked of :mod:`barsym.kb.rules`):
- ``count`` is the number of items needed; crafting runs whole recipe batches.
- recipes larger than 2x2 need a crafting table; smelting needs a furnace and
  fuel worth at least one item per smelted item (leftover burn is lost), unless
  the rule profile says otherwise (``crafting``: neither, and nothing is mined).
- mining needs the resource's layer and a tool of the right kind and tier;
  ``dig down`` needs a pickaxe and goes one layer deeper.

:func:`barsym.sim.rollout.rollout` plays a whole plan, past failures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..kb import CRAFTING_TABLE, FURNACE, KnowledgeBase, Rules, UnknownItemError, rules_for
from ..model import Step, StepType
from .failure import Code, Failure, StepFailed
from .state import State

_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class Transition:
    state: State
    item: str | None = None  # resolved item the step makes
    produced: Mapping[str, int] = field(default_factory=dict)
    consumed: Mapping[str, int] = field(default_factory=dict)
    fuel: Mapping[str, int] = field(default_factory=dict)
    used: frozenset[str] = frozenset()  # tools and stations the step relied on
    notes: tuple[str, ...] = field(default=())
    recipe: int | None = None  # which of the item's recipes a craft or smelt used (0-based)
    batches: int = 1  # crafting runs (items smelted, for a smelt)


class Simulator:
    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None):
        self.kb = kb
        self.rules = rules_for(kb, rules)

    # ---- public pure API ----------------------------------------------------
    def applicable(self, step: Step, state: State) -> bool:
        return isinstance(self.transition(step, state), Transition)

    def apply(self, step: Step, state: State, reserve: Mapping[str, int] = _EMPTY) -> State:
        result = self.transition(step, state, reserve)
        if isinstance(result, Failure):
            raise StepFailed(result)
        return result.state

    def transition(self, step: Step, state: State, reserve: Mapping[str, int] = _EMPTY) -> Transition | Failure:
        tool: str | None = None
        if step.tool is not None:
            named = self._resolve(step.tool)
            if isinstance(named, Failure):
                return named
            tool = named
        if (step.type.moves or step.type in (StepType.MINE, StepType.KILL)) and not self.rules.can_gather:
            what = str(step) if step.type.moves else f"{step.type.value} {step.item}"
            return Failure(
                Code.NOT_ALLOWED,
                f"{what}: under the {self.rules.name} rules nothing can be mined, "
                f"killed or dug; only crafting and smelting from the inventory",
                item=step.item,
            )
        if step.type is StepType.DIG_DOWN:
            return self._dig_down(state, tool)
        if step.type is StepType.CLIMB_UP:
            return self._climb_up(state)
        item = self._resolve(step.item or "")
        if isinstance(item, Failure):
            return item
        assert step.count is not None
        if not self.rules.generic_names and item in self.kb.generic:
            return Failure(
                Code.NOT_ALLOWED,
                f"under the {self.rules.name} rules every item is concrete: name the kind "
                f"of {item} (e.g. {self.kb.generic[item]})",
                item=item,
            )
        if step.recipe is not None:
            have = self.rules.recipe_count(step.type.value, item)
            if step.recipe >= have:
                numbers = f"0 to {have - 1}" if have > 1 else "0" if have else "none"
                return Failure(
                    Code.NOT_OBTAINABLE,
                    f"{step.type.value} {item} names recipe {step.recipe}, but it has {have} (numbers: {numbers})",
                    item=item,
                )
        if step.type is StepType.CRAFT:
            return self._craft(item, step.count, state, step.recipe)
        if step.type is StepType.SMELT:
            return self._smelt(item, step.count, state, reserve, step.recipe)
        return self._gather(step.type, item, step.count, tool, state)

    # ---- helpers --------------------------------------------------------------
    def _resolve(self, name: str) -> str | Failure:
        try:
            return self.kb.resolve(name)
        except UnknownItemError as exc:
            return Failure(Code.UNKNOWN_ITEM, str(exc), item=name, suggestions=tuple(exc.suggestions))

    def _craft(self, item: str, count: int, state: State, pinned: int | None = None) -> Transition | Failure:
        fit = self.rules.fitting_recipe(item, count, state.counts, pinned)
        if fit is None:
            return self._not_made_by(item, "craft")
        recipe = fit.recipe
        if fit.short:
            ingredient, need, had = fit.short[0]
            return Failure(
                Code.MISSING_INGREDIENT,
                f"crafting {count} {item} ({fit.batches} x {recipe.count}) needs {need} {ingredient.label}, "
                f"only {had} at hand",
                item=ingredient.label.lstrip("#"),
                needed=need,
                had=had,
                accepts=ingredient.accepts,
            )
        if fit.station_missing:
            return Failure(
                Code.MISSING_STATION,
                f"crafting {item} needs a crafting_table (its recipe is larger than the 2x2 grid); none at hand",
                item=CRAFTING_TABLE,
                needed=1,
                had=0,
            )
        made = fit.batches * recipe.count
        return Transition(
            state.changed(add={item: made}, remove=fit.taken),
            item=item,
            produced={item: made},
            consumed=fit.taken,
            used=frozenset({fit.station}) if fit.station else frozenset(),
            recipe=self.rules.recipe_number("craft", item, recipe),
            batches=fit.batches,
        )

    def _smelt(
        self, item: str, count: int, state: State, reserve: Mapping[str, int], pinned: int | None = None
    ) -> Transition | Failure:
        rules = self.rules
        chosen = rules.smelt_recipe(item, count, state.counts, pinned)
        if chosen is None:
            return self._not_made_by(item, "smelt")
        if rules.furnace_needed and state.count(FURNACE) == 0:
            return Failure(
                Code.MISSING_STATION, f"smelting {item} needs a furnace; none at hand", item=FURNACE, needed=1, had=0
            )
        recipe, taken, short = chosen
        if short:
            have = count - short
            return Failure(
                Code.MISSING_INGREDIENT,
                f"smelting {count} {item} needs {count} {recipe.input.label}, only {have} at hand",
                item=recipe.input.label,
                needed=count,
                had=have,
                accepts=recipe.input.accepts,
            )
        after_input = state.changed(remove=taken)
        fuel: dict[str, int] = {}
        if rules.fuel_needed:
            fuel, burn = rules.pick_fuel(after_input.counts, count, reserve)
            if burn < count:
                return self._no_fuel(item, count, burn, after_input, reserve)
        consumed = dict(taken)
        for name, n in fuel.items():
            consumed[name] = consumed.get(name, 0) + n
        return Transition(
            state.changed(add={item: count}, remove=consumed),
            item=item,
            produced={item: count},
            consumed=consumed,
            fuel=fuel,
            used=frozenset({FURNACE}) if rules.furnace_needed else frozenset(),
            recipe=self.rules.recipe_number("smelt", item, recipe),
            batches=count,
        )

    def _no_fuel(self, item: str, count: int, spare: float, after_input: State, reserve: Mapping[str, int]) -> Failure:
        value = self.rules.fuel_value
        total = sum(value(n) * c for n, c in after_input.counts.items())
        held_back = ""
        if total >= count:
            needed_later = {n: reserve[n] for n in reserve if value(n) > 0 and after_input.count(n)}
            held_back = (
                " (other fuel at hand is needed by later steps: "
                + ", ".join(f"{c} {n}" for n, c in sorted(needed_later.items()))
                + ")"
            )
        return Failure(
            Code.INSUFFICIENT_FUEL,
            f"smelting {count} {item} needs fuel for {count} items; spare fuel at hand burns for {spare:g}{held_back}",
            item="fuel",
            needed=count,
            had=spare,
        )

    def _gather(self, kind: StepType, item: str, count: int, tool: str | None, state: State) -> Transition | Failure:
        verb = kind.value
        try:
            action = self.rules.action(verb, item, count)  # what the rule book's schema says it needs
        except KeyError:
            return self._not_made_by(item, verb)
        if state.layer not in action.layers:
            where = ", ".join(self.kb.layer_name(layer) for layer in sorted(action.layers))
            climb = "climb up first" if self.rules.can_climb else "the agent cannot climb back up"
            hint = "dig down first" if state.layer < action.layer else climb
            return Failure(
                Code.WRONG_LAYER,
                f"{item} is found on layer {where}; the agent is on layer {self.kb.layer_name(state.layer)} ({hint})",
                item=item,
                needed=action.layer,
                had=state.layer,
            )
        used: set[str] = set()
        if tool is not None and state.count(tool) == 0:
            return Failure(
                Code.MISSING_TOOL, f"the step names {tool} as its tool, but none is at hand", item=tool, needed=1, had=0
            )
        if action.tool is not None:
            chosen = self._pick_tool(action.tool.kind, action.tool.tier, tool, state, f"{verb} {item}")
            if isinstance(chosen, Failure):
                return chosen
            used.add(chosen)
        elif tool is not None:
            used.add(tool)
        uses = {slot.accepts[0]: slot.count for slot in action.needs}
        for name, need in uses.items():
            if state.count(name) < need:
                return Failure(
                    Code.MISSING_INGREDIENT,
                    f"{verb} {count} {item} uses {need} {name} (one per unit), only {state.count(name)} at hand",
                    item=name,
                    needed=need,
                    had=state.count(name),
                    accepts=(name,),
                )
        return Transition(
            state.changed(add={item: count}, remove=uses),
            item=item,
            produced={item: count},
            consumed=uses,
            used=frozenset(used),
        )

    def _pick_tool(self, kind: str, min_tier: int, named: str | None, state: State, doing: str) -> str | Failure:
        kb, rules = self.kb, self.rules
        if named is not None:
            if rules.is_tool(named, kind, min_tier):
                return named
            info = kb.tool(named)
            if not rules.is_tool(named, kind):
                return Failure(
                    Code.MISSING_TOOL,
                    f"{doing} needs a {kind}; {named} is not one",
                    item=kind,
                    needed=min_tier,
                    had=None,
                )
            if info is not None:
                return Failure(
                    Code.TOOL_TIER_TOO_LOW,
                    f"{doing} needs a {kind} of tier {kb.tier_name(min_tier)} or better; {named} is {kb.tier_name(info.tier)}",
                    item=named,
                    needed=min_tier,
                    had=info.tier,
                )
            return named
        if kind not in self.rules.tiered_kinds:  # shears: no tiers
            if state.count(kind) > 0:
                return kind
            return Failure(Code.MISSING_TOOL, f"{doing} needs {kind}; none at hand", item=kind, needed=1, had=0)
        good = self.rules.best_held_tool(kind, min_tier, state.count)
        if good is not None:
            return good
        held = [tool for name in rules.tools_for(kind, 0) if state.count(name) > 0 and (tool := rules.tool(name))]
        if held:
            top = max(held, key=lambda t: t.tier)
            return Failure(
                Code.TOOL_TIER_TOO_LOW,
                f"{doing} needs a {kind} of tier {kb.tier_name(min_tier)} or better; the best at hand is {top.name}",
                item=top.name,
                needed=min_tier,
                had=top.tier,
            )
        return Failure(
            Code.MISSING_TOOL,
            f"{doing} needs a {kb.tier_name(min_tier)} {kind} or better; none at hand",
            item=f"{kb.tier_name(min_tier)}_{kind}",
            needed=1,
            had=0,
        )

    def _dig_down(self, state: State, tool: str | None) -> Transition | Failure:
        need = self.rules.dig(state.layer + 1).tool
        assert need is not None
        if tool is not None and state.count(tool) == 0:
            return Failure(
                Code.MISSING_TOOL, f"dig down names {tool} as its tool, but none is at hand", item=tool, needed=1, had=0
            )
        chosen = self._pick_tool(need.kind, need.tier, tool, state, "dig down")
        if isinstance(chosen, Failure):
            return chosen
        below = self.rules.next_layer(state.layer, "dig_down")
        if below == state.layer:
            return Transition(
                state, used=frozenset({chosen}), notes=("already on the deepest layer: dig down changes nothing",)
            )
        return Transition(State(state.inventory, below), used=frozenset({chosen}))

    def _climb_up(self, state: State) -> Transition | Failure:
        """One layer up (a staircase needs no tool); BAR's agent never does this, a player does."""
        if not self.rules.can_climb:
            return Failure(Code.NOT_ALLOWED, f"under the {self.rules.name} rules the agent never climbs back up")
        above = self.rules.next_layer(state.layer, "climb_up")
        if above == state.layer:
            return Transition(state, notes=("already on the surface: climb up changes nothing",))
        return Transition(State(state.inventory, above))

    def _not_made_by(self, item: str, verb: str) -> Failure:
        ways = self.kb.producers(item)
        if ways:
            source = self.rules.origin(item)
            detail = f" ({source.kind} {source.origin})" if source and source.kind in ways else ""
            hint = f"it is obtained by {' or '.join(ways)}{detail}"
        else:
            hint = "no recipe, resource or mob drop makes it in this knowledge base"
        return Failure(Code.NOT_OBTAINABLE, f"{item} cannot be obtained by '{verb}': {hint}", item=item)
