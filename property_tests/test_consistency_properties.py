"""Hypothesis properties of state consistency (BAR module b) on mutated expert plans.

- Repairing a valid plan returns it unchanged (from any start it is valid from).
- With simulator scores, one round touches only the windows: every step
  outside them comes back where it was, marked ``kept``.
- The symbolic repairer's output always validates: expert plans with steps
  dropped, swapped, repeated, recounted or foreign steps put in are repaired
  to valid plans for the expert's goal.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barsym.bar_io import read_plan
from barsym.consistency import ConsistencyConfig, Provenance, StateConsistency
from barsym.kb import load_kb
from barsym.model import Plan, Step, StepType
from barsym.sim import State
from barsym.validation import Validator
from testdata import EXPERT_FILES

KB = load_kb()
VALIDATOR = Validator(KB)
EXPERT = [read_plan(p) for p in EXPERT_FILES]
VALID = [p for p in EXPERT if VALIDATOR.validate(p).valid]
ENGINE = StateConsistency(KB)
ONE_ROUND = StateConsistency(KB, ConsistencyConfig(rounds=1))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FOREIGN = [
    "planks",
    "stick",
    "logs",
    "cobblestone",
    "iron_ingot",
    "crafting_table",
    "furnace",
    "torch",
    "coal",
    "iron_ore",
    "glass",
    "unobtainium",
]


@st.composite
def mutated(draw):
    plan = draw(st.sampled_from(EXPERT))
    steps = list(plan.steps)
    for _ in range(draw(st.integers(1, 4))):
        if not steps:
            break
        i = draw(st.integers(0, len(steps) - 1))
        op = draw(st.sampled_from(["drop", "swap", "count", "insert", "repeat"]))
        if op == "drop":
            steps.pop(i)
        elif op == "swap" and i + 1 < len(steps):
            steps[i], steps[i + 1] = steps[i + 1], steps[i]
        elif op == "count" and steps[i].count:
            steps[i] = steps[i].model_copy(update={"count": draw(st.integers(1, 2 * steps[i].count))})
        elif op == "insert":
            kind = draw(st.sampled_from([StepType.CRAFT, StepType.MINE, StepType.SMELT]))
            steps.insert(i, Step(type=kind, item=draw(st.sampled_from(FOREIGN)), count=draw(st.integers(1, 5))))
        elif op == "repeat":
            steps.insert(i, steps[i])
    return plan, Plan(steps=tuple(steps))


@SETTINGS
@given(
    st.sampled_from(VALID),
    st.dictionaries(st.sampled_from(["logs", "stick", "cobblestone", "coal", "dirt"]), st.integers(1, 6), max_size=3),
)
def test_repairing_a_valid_plan_returns_it_unchanged(plan, held):
    start = State.start(held)
    if not VALIDATOR.validate(plan, start=start).valid:
        return
    result = ENGINE.repair(plan, start=start)
    assert result.plan.steps == plan.steps and not result.rounds
    assert set(result.provenance) <= {Provenance.KEPT}


@SETTINGS
@given(mutated())
def test_steps_outside_the_windows_are_kept(case):
    expert, plan = case
    if not plan.steps:
        return
    result = ONE_ROUND.repair(plan, goal=expert.default_goal())
    if result.edit is not None:  # the smallest repair (one step) made it valid: no windows, every other step kept
        assert not result.rounds and result.valid_after and abs(len(result.plan) - len(plan)) <= 1
        assert result.provenance.count(Provenance.REPAIRED_SYMBOLIC) <= 1
        assert result.provenance.count(Provenance.KEPT) >= len(plan) - 1
        return
    if not result.rounds:
        assert result.plan.steps == plan.steps
        return
    record = result.rounds[0]
    expected, labels, at = [], [], 1
    for window, repair in zip(record.windows, record.repairs):
        expected += plan.steps[at - 1 : window.start - 1]
        labels += [Provenance.KEPT] * (window.start - at)
        expected += repair.steps
        labels += [None] * len(repair.steps)
        at = window.end
    expected += plan.steps[at - 1 :]
    labels += [Provenance.KEPT] * (len(plan) + 1 - at)
    assert list(result.plan.steps) == expected
    assert all(want is None or got is want for got, want in zip(result.provenance, labels))


@SETTINGS
@given(mutated())
def test_the_symbolic_repairer_always_validates(case):
    expert, plan = case
    if not plan.steps:
        return
    goal = expert.default_goal()
    result = ENGINE.repair(plan, goal=goal)
    assert result.valid_after, (
        [str(s) for s in plan.steps],
        [str(s) for s in result.plan.steps],
        result.after.errors[:1],
    )
    assert VALIDATOR.validate(result.plan, goal=goal).valid
