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

:func:`step_uses` reads off what each step that ran used: a craft's or smelt's
recipe (an iron ingot from a block or from nine nuggets: the name does not
say), one batch's ingredients, and the units consumed and made, so a plan
replayed in another crafting environment (Plancraft's, a bot's) places the same
ingredients; ``barsym plan --format json`` and :meth:`barsym.api.Planned.uses`
hand them on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
            craft = rules.fitting_action(item, step.count, state.counts, _pinned(rules, "craft", item, step))
            if craft is None:
                continue
            needs = [(slot.accepts, slot.count) for slot in craft.needs]
        else:
            chosen = rules.smelt_recipe(item, step.count, state.counts, _pinned(rules, "smelt", item, step))
            if chosen is None:
                continue
            needs = [(chosen[0].input.accepts, step.count)]
        for accepts, n in needs:
            held = next((a for a in accepts if state.count(a) > 0), accepts[-1])
            demand[held] += n
    return demand


def _pinned(rules: Rules, kind: str, item: str, step: Step) -> int | None:
    """The recipe a step pins, where the item has it (a step naming one it lacks fails when it is played)."""
    recipe = step.recipe
    return recipe if recipe is not None and recipe < rules.recipe_count(kind, item) else None


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


@dataclass(frozen=True)
class StepUse:
    """One step that ran: ``recipe`` (``craft:iron_ingot#1``, None for gathering and moves), what one batch
    of it takes (``per_batch``, slot by slot), the batches run, and the units consumed, made and used."""

    recipe: str | None = None
    per_batch: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    consumed: dict[str, int] = field(default_factory=dict)
    made: dict[str, int] = field(default_factory=dict)
    used: tuple[str, ...] = ()  # tools and stations, not consumed
    fuel: dict[str, int] = field(default_factory=dict)  # part of ``consumed``: what burned

    def to_dict(self) -> dict:
        out: dict = {}
        if self.recipe is not None:
            index = int(self.recipe.rpartition("#")[2])
            out["recipe"] = {
                "id": self.recipe,
                "index": index,
                "per_batch": dict(self.per_batch),
                "batches": self.batches,
            }
        out["consumes"] = dict(self.consumed)
        out["makes"] = dict(self.made)
        if self.used:
            out["uses"] = list(self.used)
        if self.fuel:
            out["fuel"] = dict(self.fuel)
        return out


def step_uses(rules: Rules, played: Rollout) -> list[StepUse | None]:
    """Per step of ``played``, what it used (None for a step that failed and so used nothing)."""
    out: list[StepUse | None] = []
    for outcome in played.outcomes:
        moved = outcome.transition
        if moved is None:
            out.append(None)
            continue
        recipe, per_batch = None, {}
        kind = outcome.step.type
        if kind in (StepType.CRAFT, StepType.SMELT) and moved.item is not None and moved.recipe is not None:
            recipe = rules.recipe_id(kind.value, moved.item, moved.recipe)
            per_batch = rules.recipe_inputs(kind.value, moved.item, moved.recipe)
        out.append(
            StepUse(
                recipe,
                per_batch,
                moved.batches if recipe is not None else 0,
                dict(moved.consumed),
                dict(moved.produced),
                tuple(sorted(moved.used)),
                dict(moved.fuel),
            )
        )
    return out
