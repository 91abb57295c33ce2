"""DEPS' selector: which steps can run now, the horizon model and its fit, and episodes driven by a selector."""

from __future__ import annotations

import pytest

from barsym.model import Goal, Step, StepType
from barsym.planner import make_planner
from barsym.planner.registry import graph_for
from barsym.planner.selector import (
    Features,
    GraphCost,
    Horizon,
    HorizonModel,
    PlanOrder,
    RandomPick,
    collect,
    execute,
    goals_first,
    ready,
    solve,
)
from barsym.sim import DeterministicWorld, State, StochasticWorld, run


@pytest.fixture(scope="module")
def bed(kb):
    """A bed: wool from sheep and planks from logs are parallel sub-goals."""
    result = make_planner("symbolic", kb).plan(Goal(item="white_bed", count=1))
    return result.plan.steps, tuple(result.needs)


def test_only_steps_whose_needs_are_done_and_that_apply_now_are_ready(kb, bed):
    steps, needs = bed
    world = DeterministicWorld(kb)
    first = ready(world, steps, needs, set(), State())
    kinds = {steps[i].type for i in first}
    assert first and kinds <= {StepType.MINE, StepType.KILL}  # nothing can be crafted from an empty inventory
    assert len(first) >= 2  # logs and wool can both be gathered first


def test_a_layer_move_waits_while_a_goal_can_run(kb):
    steps = (Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe"), Step(type=StepType.MINE, item="logs", count=1))
    assert goals_first(steps, [0, 1]) == [1] and goals_first(steps, [0]) == [0]


def test_least_squares_recovers_a_known_line():
    rows = [[1.0, float(x)] for x in range(10)]
    w = solve(rows, [3.0 + 2.0 * x for x in range(10)], ridge=0.0)
    assert w == pytest.approx([3.0, 2.0], abs=1e-6)


def test_the_horizon_model_learns_that_gathering_takes_longer_than_crafting(kb, bed):
    world = StochasticWorld(kb)
    features = Features(world)
    samples = collect(world, [bed], episodes=5, seed=1, features=features)
    assert samples and all(ticks >= 0 for _, ticks in samples)
    model = HorizonModel.fit(samples, features)
    logs = model.predict(Step(type=StepType.MINE, item="logs", count=4), State())
    planks = model.predict(Step(type=StepType.CRAFT, item="planks", count=4), State.start({"oak_log": 1}))
    assert logs > planks
    with pytest.raises(ValueError, match="no rollout samples"):
        HorizonModel.fit([], features)


def test_each_selector_picks_by_its_own_rule(kb):
    graph = graph_for(kb)
    steps = (
        Step(type=StepType.MINE, item="diamond", count=1, tool="iron_pickaxe"),
        Step(type=StepType.CRAFT, item="stick", count=4),
    )
    assert PlanOrder().pick([1, 0], steps, State(), set()) == 0
    assert GraphCost(graph).pick([0, 1], steps, State(), set()) == 1  # a diamond's sub-tree costs far more

    class Fixed:
        def predict(self, step, state, later=()):
            return {StepType.MINE: 5.0, StepType.CRAFT: 50.0}[step.type]

    assert Horizon(Fixed()).pick([0, 1], steps, State(), set()) == 0
    picks = {RandomPick(seed).pick([0, 1], steps, State(), set()) for seed in range(20)}
    assert picks == {0, 1}


def test_an_episode_in_plan_order_is_the_plan_run_as_written(kb, bed):
    steps, needs = bed
    world = DeterministicWorld(kb)
    out = execute(world, steps, needs, PlanOrder(), Goal(item="white_bed"), 0, None)
    from barsym.model import Plan

    plain = run(Plan(steps=steps), world, goal=Goal(item="white_bed"))
    assert out.success and plain.successes == 1 and out.ticks == plain.episodes[0].ticks
    assert out.choices >= 1


def test_an_episode_with_nothing_ready_fails_instead_of_spinning(kb):
    steps = (Step(type=StepType.CRAFT, item="stick", count=4),)
    out = execute(DeterministicWorld(kb), steps, (), PlanOrder(), Goal(item="stick"), 0, None)
    assert not out.success and out.ticks == 0
