"""Hypothesis properties of fusion, ordering and symbolic planning.

Fusion must be pure bookkeeping (same totals, idempotent, blind to the order in
which equal steps arrive); every plan the planner returns must run and end with
the goal; and the ordering must rest on real needs only, so any reordering that
keeps the recorded needs (swapping independent neighbours, or any topological
order of them) stays executable.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import PlanningError, fuse, fusion_key, make_planner
from barsym.validation import Validator, Verdict

KB = load_kb()
PLANNER = make_planner("symbolic", KB)
VALIDATOR = Validator(KB)
REACHABLE = sorted(
    i for i in set(KB.crafts) | set(KB.smelts) | set(KB.sources) if PLANNER.graph.reachability(i).reachable
)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ITEMS = ["logs", "planks", "stick", "cobblestone", "iron_ore", "iron_ingot", "furnace"]
TOOLS = [None, "wooden_pickaxe", "stone_pickaxe"]


@st.composite
def steps(draw):
    kind = draw(st.sampled_from([StepType.MINE, StepType.CRAFT, StepType.SMELT, StepType.DIG_DOWN]))
    if kind is StepType.DIG_DOWN:
        return Step(type=kind, tool=draw(st.sampled_from(TOOLS[1:])))
    return Step(
        type=kind, item=draw(st.sampled_from(ITEMS)), count=draw(st.integers(1, 64)), tool=draw(st.sampled_from(TOOLS))
    )


def totals(seq):
    out: Counter = Counter()
    for step in seq:
        out[(step.type, step.item)] += step.count or 1
    return out


@SETTINGS
@given(st.lists(steps(), max_size=25))
def test_fusion_conserves_counts_per_item(seq):
    assert totals(fuse(seq)) == totals(seq)


@SETTINGS
@given(st.lists(steps(), max_size=25))
def test_fusion_is_idempotent(seq):
    once = fuse(seq)
    assert fuse(once) == once
    keys = [fusion_key(s) for s in once if fusion_key(s) is not None]
    assert len(keys) == len(set(keys))


@SETTINGS
@given(st.lists(steps(), max_size=25), st.randoms(use_true_random=False))
def test_fusion_ignores_the_order_equal_steps_arrive_in(seq, rnd):
    slots: dict = {}
    for position, step in enumerate(seq):
        slots.setdefault(fusion_key(step) or ("dig", position), []).append(position)
    shuffled = list(seq)
    for positions in slots.values():
        members = [seq[p] for p in positions]
        rnd.shuffle(members)
        for p, step in zip(positions, members):
            shuffled[p] = step
    assert fuse(shuffled) == fuse(seq)


goals = st.builds(lambda item, n: Goal(item=item, count=n), st.sampled_from(REACHABLE), st.integers(1, 64))


def planned(goal):
    try:
        return PLANNER.plan(goal)
    except PlanningError as exc:
        assert exc.kind == "no_return", exc.message  # reachable items fail only on climbing back up
        assume(False)


@SETTINGS
@given(goals)
def test_random_goal_gives_a_valid_fused_plan_ending_with_the_goal(goal):
    result = planned(goal)
    check = VALIDATOR.validate(result.plan, goal=goal)
    assert check.verdict is Verdict.VALID
    assert check.final_state.count_any(KB.acceptable(goal.item)) >= goal.count
    assert fuse(result.plan.steps) == list(result.plan.steps)  # one step per action
    layers = [s for s in result.plan.steps if s.type is StepType.DIG_DOWN]
    assert len(layers) <= KB.deepest_layer


@SETTINGS
@given(goals, st.data())
def test_swapping_independent_adjacent_steps_keeps_validity(goal, data):
    result = planned(goal)
    free = [i for i in range(len(result.plan) - 1) if result.independent(i, i + 1)]
    assume(free)
    i = data.draw(st.sampled_from(free))
    steps = list(result.plan.steps)
    steps[i], steps[i + 1] = steps[i + 1], steps[i]
    assert VALIDATOR.validate(Plan(steps=tuple(steps)), goal=goal).valid


@SETTINGS
@given(goals, st.randoms(use_true_random=False))
def test_any_order_that_keeps_the_needs_is_valid(goal, rnd):
    result = planned(goal)
    n = len(result.plan)
    before = {i: set() for i in range(n)}
    for first, then, _ in result.needs:
        before[then].add(first)
    order: list[int] = []
    while len(order) < n:
        ready = [i for i in range(n) if i not in order and before[i] <= set(order)]
        order.append(rnd.choice(ready))
    plan = Plan(steps=tuple(result.plan.steps[i] for i in order))
    assert VALIDATOR.validate(plan, goal=goal).valid
