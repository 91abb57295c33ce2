"""Hypothesis: under Plancraft's rules (``--rules crafting``) the planner is complete, monotone and honest.

Issue 56: the inventory search said "missing 6 planks" for an oak fence it could
make from 64 logs, "cannot be made" for a crossbow once three sticks were added
to a start it planned, and broke an iron block an anvil needed. Over small
goals and small inventories drawn from each goal's own recipes:

- **complete**: whenever a brute-force breadth-first search over every craft
  and smelt (every recipe, one batch at a time, from the start inventory) or
  the validator (a drawn sequence of steps) reaches the goal, the planner plans;
- **monotone**: adding items to a start never turns a planned goal impossible;
- **honest**: an impossible verdict names a shortfall of concrete items, and
  the start with those items added plans.
"""

from __future__ import annotations

import re
from collections import deque
from functools import cache

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.testing import runnable_plans
from barsym.validation import Validator

KB = load_kb()
PLANNER = make_planner("symbolic", KB, rules="crafting")
VALIDATOR = Validator(KB, "crafting")
RULES = VALIDATOR.rules
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GOALS = [
    "oak_fence",
    "crossbow",
    "anvil",
    "stick",
    "crafting_table",
    "chest",
    "ladder",
    "tripwire_hook",
    "torch",
    "iron_pickaxe",
    "bucket",
    "shears",
    "oak_slab",
    "bowl",
    "lever",
    "iron_bars",
    "hopper",
    "book",
    "oak_sign",
    "stone_pickaxe",
]
#: the brute force's reach: actions per search path and states kept
DEPTH, STATES = 5, 40_000


@cache
def cone(item: str) -> tuple[str, ...]:
    """The concrete items that can take part in making ``item``: itself, and its recipes' ingredients, down."""
    seen: dict[str, None] = {}
    stack = [item]
    while stack:
        name = stack.pop()
        if name in seen or name in KB.generic or len(seen) > 12:
            continue
        seen[name] = None
        for recipe in KB.crafts.get(name, ()):
            for ingredient in recipe.ingredients:
                stack.extend(a for a in ingredient.accepts[:3] if a not in KB.generic)
        for recipe in KB.smelts.get(name, ()):
            stack.extend(a for a in recipe.input.accepts[:3] if a not in KB.generic)
    return tuple(seen)


def makes(item: str) -> list[tuple[str, str, int]]:
    """(kind, item, recipe) of every craft and smelt inside ``item``'s cone."""
    out = []
    for name in cone(item):
        out += [("craft", name, i) for i in range(len(KB.crafts.get(name, ())))]
        out += [("smelt", name, i) for i in range(len(KB.smelts.get(name, ())))]
    return out


def brute_force(goal: Goal, start: State) -> list[Step] | None:
    """The shortest list of one-batch crafts and smelts that reaches ``goal`` (within DEPTH), or None."""
    want = KB.acceptable(goal.item)
    actions = makes(goal.item)
    first = tuple(sorted(start.counts.items()))
    seen = {first}
    queue: deque = deque([(first, [])])
    while queue and len(seen) < STATES:
        key, path = queue.popleft()
        held = dict(key)
        if sum(held.get(name, 0) for name in want) >= goal.count:
            return path
        if len(path) >= DEPTH:
            continue
        for kind, item, index in actions:
            if kind == "craft":
                fit = RULES.fit(KB.crafts[item][index], KB.crafts[item][index].count, held)
                if not fit.paid:
                    continue
                taken, made = fit.taken, KB.crafts[item][index].count
            else:
                chosen = RULES.smelt_recipe(item, 1, held, index)
                if chosen is None or chosen[2]:
                    continue
                taken, made = chosen[1], 1
            after = dict(held)
            for name, n in taken.items():
                after[name] -= n
            after[item] = after.get(item, 0) + made
            new = tuple(sorted((k, v) for k, v in after.items() if v))
            if new not in seen:
                seen.add(new)
                step = Step(type=StepType(kind), item=item, count=made, recipe=index)
                queue.append((new, path + [step]))
    return None


def planned(goal: Goal, start: State):
    try:
        return PLANNER.plan(goal, start)
    except PlanningError as exc:
        assert exc.kind.value == "impossible", exc.message
        return None


@st.composite
def tasks(draw):
    """(goal, start): a goal of GOALS and up to four kinds of its cone's items, 1-9 of each."""
    item = KB.resolve(draw(st.sampled_from(GOALS)))
    parts = [name for name in cone(item) if name != item]
    held = draw(st.dictionaries(st.sampled_from(parts), st.integers(1, 9), max_size=4)) if parts else {}
    return Goal(item=item, count=draw(st.integers(1, 2))), State.start(held)


@SETTINGS
@given(tasks())
@example((Goal(item="oak_fence"), State.start({"oak_log": 64})))
@example((Goal(item="crossbow"), State.start({"oak_planks": 64, "iron_ingot": 5, "string": 5, "stick": 3})))
@example((Goal(item="anvil"), State.start({"iron_block": 3, "iron_ingot": 3, "iron_nugget": 9})))
def test_whenever_brute_force_finds_a_plan_the_planner_does(task):
    goal, start = task
    found = brute_force(goal, start)
    result = planned(goal, start)
    if found is not None:
        assert VALIDATOR.validate(Plan(steps=tuple(found)), goal=goal, start=start).valid
        assert result is not None, (goal, start.describe(), [str(s) for s in found])
    if result is not None:
        assert VALIDATOR.validate(result.plan, goal=goal, start=start).valid


@SETTINGS
@given(tasks(), st.data())
def test_whenever_a_drawn_plan_validates_the_planner_plans(task, data):
    """A plan drawn step by step among the crafts and smelts that run; its last item, as many as it ends
    with, is the goal: the validator accepts the plan, so the planner must plan."""
    _, start = task
    actions = makes(task[0].item)
    steps_ = [Step(type=StepType(kind), item=item, count=1, recipe=index) for kind, item, index in actions]
    plan, state = data.draw(runnable_plans(start, lambda _: steps_, rules="crafting", max_steps=5))
    steps = list(plan.steps)
    assume(steps)
    item = KB.resolve(steps[-1].item or "")
    goal = Goal(item=item, count=min(state.count_any(KB.acceptable(item)), 64))
    assert VALIDATOR.validate(Plan(steps=tuple(steps)), goal=goal, start=start).valid
    assert planned(goal, start) is not None, (goal, start.describe(), [str(s) for s in steps])


@SETTINGS
@given(tasks(), st.data())
def test_more_items_never_turn_a_planned_goal_impossible(task, data):
    goal, start = task
    assume(planned(goal, start) is not None)
    extra = data.draw(st.dictionaries(st.sampled_from(cone(goal.item)), st.integers(1, 9), max_size=3))
    richer = dict(start.counts)
    for name, n in extra.items():
        richer[name] = richer.get(name, 0) + n
    assert planned(goal, State.start(richer)) is not None, (goal, start.describe(), extra)


MISSING = re.compile(r"missing (.+)$")


@SETTINGS
@given(tasks())
@example((Goal(item="iron_pickaxe"), State.start({"iron_ingot": 1, "stick": 2})))
def test_an_impossible_verdict_names_a_shortfall_that_makes_it_possible(task):
    goal, start = task
    try:
        PLANNER.plan(goal, start)
        return
    except PlanningError as exc:
        assert exc.kind.value == "impossible", exc.message
        message = exc.message
    found = MISSING.search(message)
    assert found is not None, message
    richer = dict(start.counts)
    for part in found.group(1).split(", "):
        n, name = part.split(" ", 1)
        assert name in KB.items and name not in KB.generic, (message, name)  # a concrete item, not "planks"
        richer[name] = richer.get(name, 0) + int(n)
    assert planned(goal, State.start(richer)) is not None, (goal, start.describe(), message)
