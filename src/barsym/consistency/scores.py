"""Deterministic step scores: BAR's 1-10 rating of every step, read off the full rollout.

BAR (module b) asks a model to rate each step from 1 ("the next few steps
starting from this step are likely wrong") to 10 ("they are completely
accurate"); steps rated below ``t`` start anchor pairs for forward repair.
barsym has what the model lacks, the simulator, so it can give the same
rating deterministically and use it as ground truth for the model's.

**The formula.** Step ``i`` (1-based) of an ``n``-step plan looks at itself and
the next ``k`` steps, ``i .. i+k``. When the plan stops before ``i+k`` and its
goal is not reached at the end, the end counts as a failing step ``n+1``.

- No failure among them: **10**.
- Otherwise let ``d`` (0..k) be the distance from ``i`` to the first failure
  and ``b`` its kind: ``0`` *intrinsic* (the step cannot run in any state: an
  unknown item, an action that cannot make it, a named tool that cannot
  serve, a step the rule profile forbids), ``1`` *state* (it would run from a
  better-prepared state: a missing ingredient, tool, station, layer or fuel,
  or the goal missing at the end), ``2`` *knock-on* (it fails only because an
  earlier failed step made nothing; the validator's ``caused_by``).
  The score is ``min(9, 1 + b + floor(8 d / (k + 1)))``.
- A step that ran but made too few: when a failure is a missing ingredient
  (or the goal is short at the end), the last step before it that ran and
  made a missing item (each short slot counts) is judged as if that failure
  came right after it
  (``d = 1``, kind *state*), wherever the failure is. A cut count shows only
  where its item runs out, maybe at the end of the plan; the blame puts an
  anchor on the step that was cut, so it can be widened back.

- A step that runs but that the plan does not need (without it, no step
  fails that ran, and the goal is no further off: ``mine 2 bamboo`` for
  sticks made from planks, a second iron pickaxe eating the ingots the goal
  needed) scores ``1 + 3`` = 4, kind *unneeded*, when nothing lower applies.

With the paper's ``k = 3`` a step that fails itself scores 1-3, the step just
before a failure 3-5, two before 5-7, three before 7-9: lower the sooner the
failure follows and the worse it is. At ``t = 5`` the anchors start at every
failing step, at the step before a root failure (a dropped dig down is
repaired right where it was dropped), at a step that made too few, and at an
unneeded step, which a repair may leave out. A valid plan is never repaired,
whatever its scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..kb import Rules, UnknownItemError
from ..model import Goal, Plan, Step
from ..sim import Code, Failure, State
from ..validation import ValidationResult, Validator
from .config import DEFAULT_K  # defined with the other options' defaults; named here too

MIN_SCORE, MAX_SCORE = 1, 10
#: the paper's lookahead: a step is judged with the next k steps


class FailureKind(str, Enum):
    """How bad a failure is, for the score (the offset ``b`` of the formula)."""

    INTRINSIC = "intrinsic"
    STATE = "state"
    KNOCK_ON = "knock-on"
    UNNEEDED = "unneeded"  # the step runs, but the plan does no worse without it

    @property
    def offset(self) -> int:
        return {FailureKind.INTRINSIC: 0, FailureKind.STATE: 1, FailureKind.KNOCK_ON: 2, FailureKind.UNNEEDED: 3}[self]


#: codes that no start state can fix: the step itself is wrong
_INTRINSIC = (Code.UNKNOWN_ITEM, Code.NOT_OBTAINABLE, Code.NOT_ALLOWED)


@dataclass(frozen=True)
class StepFault:
    """The failure a step's score is about: where (``step``, n+1 = the goal), what kind, and why."""

    step: int
    kind: FailureKind
    code: str
    message: str


@dataclass(frozen=True)
class StepScore:
    step: int  # 1-based
    score: int  # 1..10
    fault: StepFault | None = None  # the first failure among the step and the next k; None for a 10
    blamed: bool = False  # the fault is a later shortage of what this step made (see the formula)

    @property
    def distance(self) -> int | None:
        return None if self.fault is None else self.fault.step - self.step

    def reason(self) -> str:
        if self.fault is None:
            return "it and the next steps run"
        if self.blamed:
            return f"made too few for step {self.fault.step} ({self.fault.code})"
        where = (
            "the goal is missing at the end"
            if self.fault.code == Code.GOAL_NOT_REACHED.value
            else ("fails here" if self.fault.step == self.step else f"step {self.fault.step} fails")
        )
        return f"{where} ({self.fault.kind.value}: {self.fault.code})"


def failure_kind(rules: Rules, step: Step, failure: Failure, caused_by: int | None) -> FailureKind:
    """Intrinsic, state or knock-on (see the module docstring)."""
    if failure.code in _INTRINSIC:
        return FailureKind.INTRINSIC
    if step.tool is not None and failure.code in (Code.MISSING_TOOL, Code.TOOL_TIER_TOO_LOW):
        try:
            named = rules.kb.resolve(step.tool)
        except UnknownItemError:
            return FailureKind.INTRINSIC
        # the step names a tool, and the failure is about that tool not serving (not about it being absent)
        if failure.code is Code.TOOL_TIER_TOO_LOW and failure.item == named:
            return FailureKind.INTRINSIC
        if failure.code is Code.MISSING_TOOL and failure.item != named:
            return FailureKind.INTRINSIC
    if caused_by is not None:
        return FailureKind.KNOCK_ON
    return FailureKind.STATE


def formula(distance: int, kind: FailureKind, k: int) -> int:
    """The score of a step whose first failure within its k-step lookahead is ``distance`` steps on."""
    return min(MAX_SCORE - 1, MIN_SCORE + kind.offset + (8 * distance) // (k + 1))


def faults(validator: Validator, validation: ValidationResult) -> dict[int, StepFault]:
    """Every failing step of a validated plan (and ``n+1`` for a missing goal), with its kind.

    The validator reports a missing goal only for a plan whose steps all run;
    the end is judged here in every case, from the state the plan really
    reaches, so the last steps of a plan that stops short score low too.
    """
    rollout = validation.rollout
    assert rollout is not None, "faults() needs a ValidationResult made by Validator.validate"
    found: dict[int, StepFault] = {}
    own = {e.step for e in validation.errors if e.step and e.caused_by is None}  # fails for a reason of its own
    causes = {e.step: e.caused_by for e in validation.errors if e.step and e.step not in own}
    for outcome in rollout.failures:
        kind = failure_kind(validator.rules, outcome.step, outcome.failure, causes.get(outcome.index))
        found[outcome.index] = StepFault(outcome.index, kind, outcome.failure.code.value, outcome.failure.message)
    if validation.goal is not None:
        missing = validator.goal_failure(validation.goal, rollout.final)
        if missing is not None:
            end = len(rollout.outcomes) + 1
            kind = FailureKind.INTRINSIC if missing.code is Code.UNKNOWN_ITEM else FailureKind.STATE
            found[end] = StepFault(end, kind, missing.code.value, missing.message)
    return found


def blame(validator: Validator, validation: ValidationResult, found: dict[int, StepFault]) -> dict[int, StepFault]:
    """Producer step -> the later shortage it is blamed for (the last step that made the missing item)."""
    rollout = validation.rollout
    kb = validator.kb
    blamed: dict[int, StepFault] = {}
    shortages: list[tuple[int, tuple[str, ...]]] = []
    for outcome in rollout.failures:
        fault = found[outcome.index]
        if outcome.failure.code is Code.MISSING_INGREDIENT and fault.kind is not FailureKind.INTRINSIC:
            shortages += [(outcome.index, accepts) for accepts in _short_slots(validator, outcome)]
    end = len(rollout.outcomes) + 1
    if end in found and found[end].code == Code.GOAL_NOT_REACHED.value:
        shortages.append((end, kb.acceptable(kb.resolve(validation.goal.item))))
    for at, accepts in shortages:
        for outcome in reversed(rollout.outcomes[: at - 1]):
            made = outcome.transition.item if outcome.transition is not None else None
            if made is not None and made in accepts:
                blamed.setdefault(outcome.index, found[at])
                break
    return blamed


def _short_slots(validator: Validator, outcome) -> list[tuple[str, ...]]:
    """Every ingredient slot the failed step is short of, not only the first the simulator names
    (:func:`barsym.sim.diagnosis.diagnose`), so that an axe short of both iron ingots and sticks blames the
    steps that made each."""
    from ..sim.diagnosis import diagnose

    reasons = diagnose(validator.sim, outcome.step, outcome.before).reasons
    return [r.accepts or (r.item or "",) for r in reasons if r.code is Code.MISSING_INGREDIENT]


def simulator_scores(validator: Validator, validation: ValidationResult, k: int = DEFAULT_K) -> list[StepScore]:
    """BAR's 1-10 score of every step, from the validator's full rollout (the formula above)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    found = faults(validator, validation)
    blamed = blame(validator, validation, found)
    spare = unneeded(validator, validation)
    n = len(validation.trace) - 1
    out = []
    for i in range(1, n + 1):
        first = next((found[j] for j in range(i, min(i + k, n + 1) + 1) if j in found), None)
        score = MAX_SCORE if first is None else formula(first.step - i, first.kind, k)
        if i in blamed and formula(1, FailureKind.STATE, k) < score:
            out.append(StepScore(i, formula(1, FailureKind.STATE, k), blamed[i], blamed=True))
            continue
        if i in spare and formula(0, FailureKind.UNNEEDED, k) < score:
            fault = StepFault(i, FailureKind.UNNEEDED, "unneeded", "the plan does no worse without this step")
            out.append(StepScore(i, formula(0, FailureKind.UNNEEDED, k), fault))
            continue
        out.append(StepScore(i, score, first))
    return out


def _shortcomings(validator: Validator, steps, start: State, goal: Goal | None, skip: int | None):
    """Every failure of ``steps`` (step ``skip`` left out), (original index, code, item) -> how much it misses;
    and the goal's shortfall."""
    kept = [i for i in range(len(steps)) if i != skip]
    played = validator.validate(Plan(steps=tuple(steps[i] for i in kept)), goal=None, start=start).rollout
    failing = {(kept[o.index - 1], o.failure.code, o.failure.item): _short(o.failure) for o in played.failures}
    missing = 0
    if goal is not None:
        failure = validator.goal_failure(goal, played.final)
        if failure is not None and failure.needed is not None:
            missing = int(failure.needed - (failure.had or 0))
    return failing, missing


def no_worse(validator: Validator, steps, index: int, start: State, goal: Goal | None) -> bool:
    """Whether the plan without step ``index`` (0-based) fails nowhere it did not, for no new reason,
    and ends no further from the goal: then that step is not needed."""
    failing, missing = _shortcomings(validator, steps, start, goal, None)
    without, missing_without = _shortcomings(validator, steps, start, goal, index)
    worse = any(key not in failing or short > failing[key] for key, short in without.items())
    return bool(len(steps) > 1 or goal is None) and not worse and missing_without <= missing


def _short(failure: Failure) -> float:
    """How much a failure misses (units, burn time, tiers); 1 where it names no amount."""
    if isinstance(failure.needed, (int, float)) and isinstance(failure.had, (int, float)):
        return float(failure.needed) - float(failure.had)
    return 1.0


def unneeded(validator: Validator, validation: ValidationResult) -> set[int]:
    """Steps that run and that the plan can do without (:func:`no_worse`)."""
    rollout = validation.rollout
    steps = [o.step for o in rollout.outcomes]
    return {
        o.index
        for o in rollout.outcomes
        if o.ok and no_worse(validator, steps, o.index - 1, rollout.start, validation.goal)
    }


def score_plan(
    validator: Validator, plan: Plan, goal: Goal | None = None, start: State | None = None, k: int = DEFAULT_K
) -> tuple[list[StepScore], ValidationResult]:
    """Validate ``plan`` and score every step; returns the scores and the validation they came from."""
    validation = validator.validate(plan, goal=goal, start=start)
    return simulator_scores(validator, validation, k), validation


def combine(simulator: int, llm: int | None) -> int:
    """``both``: the lower of the two scores, so a step is an anchor when either source flags it.

    The simulator knows every failure; the model may suspect steps that run
    but are still wrong for the task. Taking the minimum keeps every
    simulator anchor (recall never drops below the simulator's) and adds the
    model's; a missing model score (no answer) leaves the simulator's.
    """
    return simulator if llm is None else min(simulator, llm)
