"""Hypothesis properties of the execution worlds.

- the stochastic world never succeeds on a plan the deterministic world rejects, and fails no later;
- success rates are in [0, 1], inside their interval, and the same for the same seed;
- a run never exceeds its budget, and its ticks are the sum of its steps';
- a world step is a pure function of the world state and the step.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barsym.bar_io import read_plan
from barsym.kb import load_kb
from barsym.model import Plan, Step, StepType
from barsym.sim import State
from barsym.sim.execution import run
from barsym.sim.stochastic import StochasticWorld
from barsym.sim.world import DeterministicWorld
from testdata import EXPERT_FILES

KB = load_kb()
DETERMINISTIC, STOCHASTIC = DeterministicWorld(KB), StochasticWorld(KB)
EXPERT = [read_plan(f) for f in EXPERT_FILES]
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HELD = [
    "logs",
    "planks",
    "stick",
    "crafting_table",
    "wooden_pickaxe",
    "stone_pickaxe",
    "iron_pickaxe",
    "cobblestone",
    "iron_ingot",
    "furnace",
    "coal",
    "diamond",
    "golden_pickaxe",
    "shears",
    "bucket",
]


@st.composite
def plans(draw):
    """An expert plan with a few edits: steps dropped, repeated, swapped, or their counts changed."""
    steps = list(draw(st.sampled_from(EXPERT)).steps)
    for _ in range(draw(st.integers(0, 3))):
        index = draw(st.integers(0, len(steps) - 1))
        edit = draw(st.sampled_from(["drop", "repeat", "swap", "count", "kill", "dig", "climb", "fill"]))
        step = steps[index]
        if edit == "drop" and len(steps) > 1:
            del steps[index]
        elif edit == "repeat":
            steps.insert(index, step)
        elif edit == "swap" and index + 1 < len(steps):
            steps[index], steps[index + 1] = steps[index + 1], steps[index]
        elif edit == "count" and step.count is not None:
            steps[index] = step.model_copy(update={"count": draw(st.integers(1, 140))})
        elif edit == "kill":
            steps.insert(
                index,
                Step(
                    type=StepType.KILL,
                    item=draw(st.sampled_from(["leather", "string", "bone"])),
                    count=draw(st.integers(1, 4)),
                ),
            )
        elif edit == "climb":
            steps.insert(index, Step(type=StepType.CLIMB_UP))
        elif edit == "fill":
            steps.insert(
                index,
                Step(
                    type=StepType.MINE,
                    item=draw(st.sampled_from(["water_bucket", "milk_bucket"])),
                    count=draw(st.integers(1, 2)),
                ),
            )
        elif edit == "dig":
            steps.insert(index, Step(type=StepType.DIG_DOWN, tool=draw(st.sampled_from([None, "wooden_pickaxe"]))))
    return Plan(steps=tuple(steps), source="edited")


starts = st.builds(
    lambda inventory, layer: State.start(inventory, layer),
    st.dictionaries(st.sampled_from(HELD), st.integers(0, 3), max_size=4),
    st.integers(0, KB.deepest_layer),
)
seeds = st.integers(0, 2**64 - 1)


@SETTINGS
@given(plans(), starts, seeds)
def test_the_stochastic_world_is_never_more_lenient(plan, start, seed):
    strict = run(plan, DETERMINISTIC, start=start).episodes[0]
    executed = run(plan, STOCHASTIC, runs=3, seed=seed, start=start)
    if not strict.success:
        assert executed.successes == 0
        for episode in executed.episodes:  # and it fails no later than the deterministic world does
            assert episode.failed_step is not None and (
                strict.failed_step is None or episode.failed_step <= strict.failed_step
            )


@SETTINGS
@given(plans(), seeds, st.integers(1, 5))
def test_rates_are_rates_and_seeds_decide_them(plan, seed, runs):
    first, second = run(plan, STOCHASTIC, runs, seed), run(plan, STOCHASTIC, runs, seed)
    assert first.episodes == second.episodes and first.to_dict() == second.to_dict()
    assert 0.0 <= first.success_rate <= 1.0
    low, high = first.interval
    assert 0.0 <= low <= first.success_rate <= high <= 1.0
    assert sum(f.count for f in first.failures()) == runs - first.successes


@SETTINGS
@given(plans(), seeds, st.integers(1, 20_000))
def test_a_run_never_exceeds_its_budget(plan, seed, budget):
    for world in (STOCHASTIC, DETERMINISTIC):
        state = world.reset(seed, None, budget)
        spent = 0
        for index, step in enumerate(plan.steps):
            result = world.step(state, step, plan.steps[index + 1 :])
            spent += result.ticks
            state = result.state
            assert 0 <= result.ticks and state.ticks == spent <= budget
            if not result.ok:
                break


@SETTINGS
@given(plans(), seeds, st.integers(0, 30))
def test_a_step_is_a_function_of_state_and_step(plan, seed, at):
    state = STOCHASTIC.reset(seed)
    for index, step in enumerate(plan.steps[:at]):
        result = STOCHASTIC.step(state, step, plan.steps[index + 1 :])
        assert result == STOCHASTIC.step(state, step, plan.steps[index + 1 :])
        if not result.ok:
            break
        state = result.state
