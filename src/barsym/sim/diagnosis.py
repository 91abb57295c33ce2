"""Every reason a step cannot run, and the state it would leave had it run anyway.

The simulator stops at the first thing a step misses (the first short slot, the
layer before the tool); a plan missing both its dig down and two sticks would
name one, and the other only once the first is fixed (issue 56). Here the state
is topped up with what was missing, hypothetically, and the step tried again,
until it runs or what it misses cannot be given (an unknown item, an action that
cannot make it): each round names one more reason.

The step then runs in the topped-up state, and the tools and stations lent to it
are taken back: the result is the state the plan would be in had this step
done its part. The validator plays the plan on from there
(:meth:`barsym.validation.Validator.validate`) so that a later step failing
there too fails for a reason of its own, not as a knock-on of this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..model import Step, StepType
from .failure import Code, Failure
from .rollout import Rollout, future_demand
from .simulator import Simulator, Transition
from .state import State

_EMPTY: Mapping[str, int] = MappingProxyType({})
#: reasons looked for per step at most (a craft has a few slots and a station)
LIMIT = 8


@dataclass(frozen=True)
class Diagnosis:
    """Why ``step`` cannot run (``reasons``, the simulator's own first), and ``forced``: the state after it
    had it run with what it missed given (None when something it misses cannot be given)."""

    reasons: tuple[Failure, ...]
    forced: State | None = None
    lent: Mapping[str, int] = field(default_factory=dict)


def diagnose(sim: Simulator, step: Step, state: State, reserve: Mapping[str, int] = _EMPTY) -> Diagnosis:
    """Every reason ``step`` cannot run from ``state`` (empty when it runs), and the state it would leave."""
    reasons: list[Failure] = []
    lent: dict[str, int] = {}
    trial = state
    for _ in range(LIMIT):
        result = sim.transition(step, trial, reserve)
        if isinstance(result, Transition):
            return Diagnosis(tuple(reasons), _returned(result.state, lent), lent)
        reasons.append(result)
        patched = _given(sim, step, trial, result)
        if patched is None:
            break
        trial, gift = patched
        for name, n in gift.items():
            lent[name] = lent.get(name, 0) + n
    return Diagnosis(tuple(reasons), None, lent)


def _returned(state: State, lent: Mapping[str, int]) -> State:
    """``state`` without what was lent and not used up (a tool, a station, spare units)."""
    back = {name: min(n, state.count(name)) for name, n in lent.items()}
    return state.changed(remove={name: n for name, n in back.items() if n})


def _given(sim: Simulator, step: Step, state: State, failure: Failure) -> tuple[State, dict[str, int]] | None:
    """``state`` with what ``failure`` says is missing, and what was given; None when it cannot be given."""
    kb, rules = sim.kb, sim.rules
    code = failure.code
    if code is Code.WRONG_LAYER and isinstance(failure.needed, int):
        return State(state.inventory, failure.needed), {}
    if code is Code.MISSING_INGREDIENT:
        name = (failure.accepts or (failure.item or "",))[0]
        extra = int(failure.needed or 0) - int(failure.had or 0)
        return (state.changed(add={name: extra}), {name: extra}) if name in kb.items and extra > 0 else None
    if code is Code.MISSING_STATION and failure.item in kb.items:
        return state.changed(add={failure.item: 1}), {failure.item: 1}
    if code is Code.INSUFFICIENT_FUEL and rules.preferred_fuels:
        fuel = rules.preferred_fuels[0]
        units = rules.fuel_units(fuel, float(failure.needed or 0) - float(failure.had or 0))
        return (state.changed(add={fuel: units}), {fuel: units}) if units > 0 else None
    if code in (Code.MISSING_TOOL, Code.TOOL_TIER_TOO_LOW):
        tool = _tool(sim, step, state, failure)
        return (state.changed(add={tool: 1}), {tool: 1}) if tool is not None else None
    return None


def _tool(sim: Simulator, step: Step, state: State, failure: Failure) -> str | None:
    """The tool a tool failure asks for: the one the step names when it is absent (None when the named one
    does not serve: that is the step's own fault), else the lowest that serves."""
    kb, rules = sim.kb, sim.rules
    if step.tool:
        named = kb.resolve(step.tool) if kb.is_known(step.tool) else None
        absent = failure.code is Code.MISSING_TOOL and failure.item == named and not state.count(named or "")
        return named if absent else None
    if step.type is StepType.DIG_DOWN:
        need = rules.dig(state.layer + 1).tool
    elif step.type in (StepType.MINE, StepType.KILL) and step.item and kb.is_known(step.item):
        try:
            need = rules.action(step.type.value, kb.resolve(step.item), step.count).tool
        except KeyError:
            return None
    else:
        return None
    options = rules.tools_for(need.kind, need.tier) if need is not None else []
    return options[0] if options else None


def own_reasons(sim: Simulator, played: Rollout) -> tuple[dict[int, tuple[Failure, ...]], State]:
    """(step number -> why it fails by itself, the state the plan ends in): the plan played again, each failing
    step run anyway (:func:`diagnose`), so a later step's reasons, and a goal the end still lacks, are their
    own, not knock-ons of an earlier failure."""
    steps = tuple(o.step for o in played.outcomes)
    state, out = played.start, {}
    for outcome in played.outcomes:
        step = outcome.step
        reserve = future_demand(sim.rules, steps[outcome.index :], state) if step.type is StepType.SMELT else _EMPTY
        found = diagnose(sim, step, state, reserve)
        if found.reasons:
            out[outcome.index] = found.reasons
        if found.forced is not None:
            state = found.forced
    return out, state
