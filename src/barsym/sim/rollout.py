"""A full rollout: every step of a plan judged, not only up to the first failure.

The validator, the step scorer and the execution worlds all need the same
thing: for each step, the state before it and either the transition it makes
or the failure that stops it. A failed step changes nothing and the rollout
goes on, so a caller sees every step that would fail from where the plan
really stands (a missing crafting table early on does not hide a wrong layer
later).

Smelting is judged with the plan's future in view: fuel is never taken from
items that later crafts and smelts will consume (:func:`future_demand`), since
the plan budgeted those units for them.

A plan succeeds when every step runs *and* the final inventory holds the goal
(:func:`goal_failure`; DEPS detects success the same way, from the inventory):
one test for the validator and the execution worlds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..kb import KnowledgeBase, Rules, UnknownItemError
from ..model import Goal, Step, StepType
from .failure import Code, Failure
from .simulator import Simulator, Transition
from .state import State


@dataclass(frozen=True)
class StepOutcome:
    """Step ``index`` (1-based) played from ``before``: a transition, or a failure that changed nothing."""

    index: int
    step: Step
    before: State
    transition: Transition | None = None
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def after(self) -> State:
        return self.transition.state if self.transition is not None else self.before


@dataclass(frozen=True)
class Rollout:
    start: State
    outcomes: tuple[StepOutcome, ...]

    @property
    def final(self) -> State:
        return self.outcomes[-1].after if self.outcomes else self.start

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    @property
    def failures(self) -> list[StepOutcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def first_failure(self) -> StepOutcome | None:
        return next((o for o in self.outcomes if not o.ok), None)

    def states(self) -> list[State]:
        """``states()[0]`` is the start; ``states()[i]`` follows step i."""
        return [self.start] + [o.after for o in self.outcomes]


def future_demand(rules: Rules, steps: Sequence[Step], state: State) -> Mapping[str, int]:
    """Items later crafts and smelts will consume, charged to what is held now.

    Each later craft is read with the rule book's recipe choice against the
    current inventory; each unit is charged to the first accepted item held.
    """
    kb = rules.kb
    demand: dict[str, int] = defaultdict(int)
    for step in steps:
        if step.type not in (StepType.CRAFT, StepType.SMELT) or step.count is None:
            continue
        try:
            item = kb.resolve(step.item or "")
        except UnknownItemError:
            continue
        if step.type is StepType.CRAFT:
            craft = rules.fitting_action(item, step.count, state.counts)
            if craft is None:
                continue
            needs = [(slot.accepts, slot.count) for slot in craft.needs]
        else:
            chosen = rules.smelt_recipe(item, step.count, state.counts)
            if chosen is None:
                continue
            needs = [(chosen[0].input.accepts, step.count)]
        for accepts, n in needs:
            held = next((a for a in accepts if state.count(a) > 0), accepts[-1])
            demand[held] += n
    return demand


def rollout(sim: Simulator, steps: Sequence[Step], start: State | None = None) -> Rollout:
    """Play ``steps`` from ``start``; failed steps change nothing and later steps are still judged."""
    state = start or State()
    outcomes = []
    steps = tuple(steps)
    for index, step in enumerate(steps, start=1):
        reserve = future_demand(sim.rules, steps[index:], state) if step.type is StepType.SMELT else {}
        result = sim.transition(step, state, reserve)
        if isinstance(result, Failure):
            outcomes.append(StepOutcome(index, step, state, failure=result))
        else:
            outcomes.append(StepOutcome(index, step, state, transition=result))
            state = result.state
    return Rollout(start or State(), tuple(outcomes))


def goal_failure(kb: KnowledgeBase, goal: Goal, state: State) -> Failure | None:
    """None when ``state`` holds ``goal`` (items that count as it count); else why not.

    ``goal_not_reached``, or ``unknown_item`` for a goal the knowledge base does not know.
    """
    try:
        item = kb.resolve(goal.item)
    except UnknownItemError as exc:
        return Failure(Code.UNKNOWN_ITEM, f"goal: {exc}", item=goal.item, suggestions=tuple(exc.suggestions))
    have = state.count_any(kb.acceptable(item))
    if have >= goal.count:
        return None
    return Failure(
        Code.GOAL_NOT_REACHED,
        f"the plan ends with {have} {item}; the goal needs {goal.count}",
        item=item,
        needed=goal.count,
        had=have,
    )
