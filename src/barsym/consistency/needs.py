"""What a failing step needs, read off the simulator's failure, and how to get it from a state.

Forward repair walks a window from the state before its start anchor. When
the next step cannot run, the simulator's :class:`~barsym.sim.Failure` says why
(2 planks short, no crafting table, the wrong layer, not enough fuel), and
that is turned into a :class:`Need`: an item and a count, or a layer to reach.
No game rule is re-derived here: counts come from the failure, choices (which
member fills a slot, which tool tier, which fuel) from the symbolic
decomposer's conventions and the rule book, and the steps that meet a need
from the symbolic planner, planning from the current state (or, with
``--repair-needs model``, from the model's own decomposition: see
:class:`~barsym.consistency.config.NeedSource`).

A need is planned from the state *minus what the rest of the window and its
target will consume* (:func:`barsym.sim.future_demand`), so a crafting table
planned for one step does not eat the planks a later step was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..kb import KnowledgeBase, Rules, UnknownItemError
from ..model import MAX_COUNT, Goal, Step, StepType
from ..planner import PlanningError, SymbolicDecomposer
from ..planner.registry import graph_for, symbolic_planner
from ..sim import Code, Failure, Simulator, State, future_demand, rollout
from ..validation import Validator
from .scores import FailureKind, failure_kind


@dataclass(frozen=True)
class Need:
    """``count`` more of ``item``, or (``item`` None) being on ``layer``."""

    item: str | None
    count: int = 1
    layer: int | None = None
    reason: str = ""
    burn: float = 0.0  # a fuel need: burn time in items smelted (``item`` is BAR's fuel, others may do)

    def __str__(self) -> str:
        return f"layer {self.layer}" if self.item is None else f"{self.count} {self.item}"


@dataclass(frozen=True)
class Blocker:
    """The first step of a sequence that cannot run, and what it needs (None: nothing from a state helps)."""

    position: int  # 0-based index into the sequence; len(sequence) = the goal at the end
    failure: Failure
    need: Need | None


class NeedPlanner:
    """Turns failures into needs and needs into steps, for one knowledge base and rule profile."""

    def __init__(self, kb: KnowledgeBase, rules: Rules, sim: Simulator | None = None, planner=None):
        """``planner`` plans what is missing (anything with ``plan(goal, start) -> PlanResult``): the symbolic
        planner unless one is given (``--repair-needs model``: the model's own decomposition, from above, since
        this module knows nothing of models). Only a plan that its validation calls valid is used."""
        self.kb, self.rules = kb, rules
        self.sim = sim or Simulator(kb, rules)
        self.validator = Validator(kb, rules)
        # not make_planner: under durable rules that repairs
        self.planner = planner if planner is not None else symbolic_planner(kb, rules=rules)
        self.conventions = SymbolicDecomposer(kb, graph=graph_for(kb, rules), prefer=kb.prefer, rules=rules)
        self._plans: dict[tuple, tuple[Step, ...] | None] = {}

    # ---- failure -> need --------------------------------------------------------------
    def need_of(self, step: Step, failure: Failure, state: State, caused_by: int | None = None) -> Need | None:
        """What would let ``step`` run from ``state``; None when no state would (an intrinsic failure)."""
        if failure_kind(self.rules, step, failure, None) is FailureKind.INTRINSIC:
            return None
        code, why = failure.code, failure.message
        if code is Code.MISSING_INGREDIENT:
            accepts = failure.accepts or ((failure.item,) if failure.item else ())
            if not accepts:
                return None
            item = self.conventions.choose(tuple(accepts))
            return Need(item, max(1, int(failure.needed or 1) - int(failure.had or 0)), reason=why)
        if code is Code.MISSING_STATION:
            return Need(failure.item, 1, reason=why)
        if code is Code.MISSING_TOOL:
            return Need(failure.item, 1, reason=why) if failure.item and self.kb.is_known(failure.item) else None
        if code is Code.TOOL_TIER_TOO_LOW:
            held = self.rules.tool(failure.item or "")
            if held is None or failure.needed is None:
                return None
            return Need(self.conventions.tool_for(held.kind, int(failure.needed)), 1, reason=why)
        if code is Code.WRONG_LAYER:
            source = self.rules.source(self.kb.resolve(step.item)) if step.item else None
            if source is None:
                return None
            if state.layer < min(source.layers):
                return Need(None, layer=min(source.layers), reason=why)
            if state.layer > max(source.layers) and self.rules.can_climb:
                return Need(None, layer=max(source.layers), reason=why)
            return None
        if code is Code.INSUFFICIENT_FUEL:
            fuel = self.conventions.fuel
            burn = float(failure.needed or 0) - float(failure.had or 0)
            return Need(fuel, max(1, self.rules.fuel_units(fuel, burn)), reason=why, burn=burn)
        if code is Code.GOAL_NOT_REACHED:
            return Need(failure.item, max(1, int(failure.needed or 1) - int(failure.had or 0)), reason=why)
        return None

    def blocker(
        self, steps: Sequence[Step], state: State, goal: Goal | None, tail: Sequence[Step] = ()
    ) -> Blocker | None:
        """The first step of ``steps`` that cannot run from ``state`` (or the goal, missing at the end).

        ``tail`` is the plan after ``steps``: its failures are not asked about,
        but what it will consume is held back from fuel, as in the real rollout.
        """
        played = rollout(self.sim, tuple(steps) + tuple(tail), state)
        first = next((o for o in played.outcomes[: len(steps)] if not o.ok), None)
        if first is not None:
            return Blocker(first.index - 1, first.failure, self.need_of(first.step, first.failure, first.before))
        if goal is not None and not tail:
            missing = self.validator.goal_failure(goal, played.final)
            if missing is not None:
                need = (
                    None
                    if missing.code is Code.UNKNOWN_ITEM
                    else self.need_of(
                        Step(type=StepType.CRAFT, item=goal.item, count=goal.count), missing, played.final
                    )
                )
                return Blocker(len(steps), missing, need)
        return None

    def without_is_no_worse(
        self, steps: Sequence[Step], state: State, goal: Goal | None, tail: Sequence[Step] = ()
    ) -> bool:
        """Whether ``steps[1:]`` does as well as ``steps``: see :func:`barsym.consistency.scores.no_worse`."""
        from .scores import no_worse

        return no_worse(self.validator, list(steps) + list(tail), 0, state, goal)

    def play(self, steps: Sequence[Step], state: State, tail: Sequence[Step] = ()) -> State | None:
        """The state after ``steps`` (what ``tail`` consumes held back from fuel); None if one fails."""
        if not steps:
            return state
        played = rollout(self.sim, tuple(steps) + tuple(tail), state)
        head = played.outcomes[: len(steps)]
        return head[-1].after if all(o.ok for o in head) else None

    def shortfall(
        self,
        steps: Sequence[Step],
        state: State,
        goal: Goal | None,
        need: Need,
        tail: Sequence[Step] = (),
        rounds: int = 4,
    ) -> Need:
        """``need`` widened to every later shortage of the same item, so that one step covers them all.

        The need is planned and played; the rest is then played with every
        other shortage added to the state as it shows up (so the play goes on
        past a missing station), and the units of the same item still short
        widen the need; repeated until nothing of it is short. Playing the
        planned steps matters: planks crafted from the logs a later smelt was
        to burn leave that smelt short of fuel. A cut count is then one
        inserted step, not one per step it starves.
        """
        if need.item is None:
            return need
        count = need.count
        for _ in range(rounds):
            planned = self.steps_for(
                Need(need.item, count, burn=need.burn and count * self.rules.fuel_value(need.item)), state, steps, tail
            )
            if planned is None:
                break
            after = self.play(tuple(planned), state, tuple(steps) + tuple(tail))
            if after is None:
                break
            short = self.later_shortage(steps, after, goal, need.item, tail)
            if short == 0:
                break
            count += short
        return Need(
            need.item,
            count,
            reason=need.reason,
            burn=need.burn and max(need.burn, count * self.rules.fuel_value(need.item)),
        )

    def later_shortage(
        self,
        steps: Sequence[Step],
        state: State,
        goal: Goal | None,
        item: str,
        tail: Sequence[Step] = (),
        limit: int = 12,
    ) -> int:
        """Units of ``item`` that ``steps`` (and the goal) are short of from ``state``, other shortages aside.

        Other shortages are met as they show up: a missing item that is made
        from ``item`` counts what making it takes (a plan that names the goal
        but not the sticks, table and pickaxe on the way still needs their
        logs, and a repair should mine them in one go, as a person would,
        not a few at a time before each step that runs out); any other
        missing item is added to the state; a missing layer is met by layer
        moves put in before the step that needs it (whose pickaxe is then
        needed in turn).
        """
        same = set(self.kb.acceptable(item)) | {item}
        extra: dict[str, int] = {}
        seq = list(steps)
        total = 0
        for _ in range(limit):
            found = self.blocker(seq, state.changed(add=extra), goal, tail)
            if found is None or found.need is None:
                break
            other = found.need
            if other.item is None:
                here = int(found.failure.had) if isinstance(found.failure.had, int) else None
                if here is None or other.layer is None or other.layer == here or found.position >= len(seq):
                    break
                kind = StepType.DIG_DOWN if other.layer > here else StepType.CLIMB_UP
                seq[found.position : found.position] = [Step(type=kind)] * abs(other.layer - here)
                continue
            if other.item in same:
                total += other.count
            else:
                total += self._made_of(other, same, state.changed(add=extra), seq[found.position :], tail)
            extra[other.item] = extra.get(other.item, 0) + other.count
        return total

    def _made_of(self, need: Need, same: set[str], state: State, rest: Sequence[Step], tail: Sequence[Step]) -> int:
        """Units of the item (``same``: it and what may stand for it) the need's planner gathers for ``need``."""
        planned = self.steps_for(need, state, rest, tail)
        return sum(
            s.count or 0
            for s in planned or ()
            if s.item and self.kb.is_known(s.item) and self.kb.resolve(s.item) in same
        )

    # ---- need -> steps ------------------------------------------------------------------
    def steps_for(
        self, need: Need, state: State, rest: Sequence[Step], tail: Sequence[Step] = ()
    ) -> tuple[Step, ...] | None:
        """Steps that meet ``need`` from ``state`` without taking what ``rest`` (and ``tail``) will consume."""
        if need.item is None:
            return self._layer_steps(need.layer, state)
        if need.burn:  # BAR budgets planks; underground, a coal ore at hand beats climbing for logs
            options = [
                self._item_steps(Need(fuel, self.rules.fuel_units(fuel, need.burn)), state, rest, tail)
                for fuel in self.fuels()
            ]
            found = [o for o in options if o is not None]
            return min(found, key=len) if found else None
        return self._item_steps(need, state, rest, tail)

    def fuels(self) -> list[str]:
        """Fuels a need may be met with: BAR's (planks) first, then the concrete items of the furnace's order."""
        return list(dict.fromkeys([self.conventions.fuel, *self.rules.preferred_fuels]))

    def _item_steps(
        self, need: Need, state: State, rest: Sequence[Step], tail: Sequence[Step]
    ) -> tuple[Step, ...] | None:
        reserve = future_demand(
            self.rules, tuple(rest) + tuple(tail), state
        )  # a station or tool consumed later may still be used now
        free = state.changed(
            remove={
                name: min(n, state.count(name)) for name, n in reserve.items() if not self.rules.is_persistent(name)
            }
        )
        key = (need.item, need.count, free)
        if need.count > MAX_COUNT:  # more than a step can name (a chooser's huge count widened): no plan makes it
            return None
        if key not in self._plans:
            try:
                result = self.planner.plan(Goal(item=need.item, count=need.count), free)
                self._plans[key] = result.plan.steps if result.validation.valid else None
            except (PlanningError, UnknownItemError):
                self._plans[key] = None
        return self._plans[key]

    def _layer_steps(self, layer: int | None, state: State) -> tuple[Step, ...] | None:
        if layer is None or layer == state.layer:
            return ()
        if layer < state.layer:
            return (Step(type=StepType.CLIMB_UP),) * (state.layer - layer) if self.rules.can_climb else None
        need = self.rules.dig(state.layer + 1).tool
        assert need is not None
        pickaxe = self.conventions.tool_for(need.kind, need.tier, best=True, held=state.count)
        if state.count(pickaxe) > 0:  # BAR digs with the pickaxe just made, the best one held
            return (Step(type=StepType.DIG_DOWN, tool=pickaxe),) * (layer - state.layer)
        return self.steps_for(Need(pickaxe, 1), state, ())
