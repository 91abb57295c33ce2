"""The strategies of :mod:`barsym.testing` (see there). Drawn values are barsym's own types."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from hypothesis import strategies as st

from ..model import Goal, Plan, Step, StepType
from ..sim import Failure, State

#: goals of BAR's tech tree (and a few more) that the overworld provides
TECH_TREE = (
    "stick",
    "planks",
    "crafting_table",
    "wooden_pickaxe",
    "wooden_sword",
    "stone_pickaxe",
    "stone_axe",
    "furnace",
    "torch",
    "chest",
    "iron_ingot",
    "iron_pickaxe",
    "iron_sword",
    "bucket",
    "shears",
    "gold_ingot",
    "golden_pickaxe",
    "clock",
    "compass",
    "redstone",
    "piston",
    "diamond",
    "diamond_pickaxe",
    "diamond_sword",
    "ladder",
    "lever",
    "note_block",
    "jukebox",
)


@lru_cache(maxsize=1)
def _kb():
    from ..api import knowledge_base

    return knowledge_base()


@lru_cache(maxsize=1)
def _symbolic():
    from ..planner import make_planner

    return make_planner("symbolic", _kb())


def goals(items=TECH_TREE, max_count: int = 4) -> st.SearchStrategy[Goal]:
    """``Goal(item, count)`` over ``items`` (names as the game or BAR writes them)."""
    names = tuple(_kb().resolve(name) for name in items)
    return st.builds(Goal, item=st.sampled_from(names), count=st.integers(1, max_count))


def inventories(
    items=TECH_TREE + ("logs", "cobblestone", "iron_ore", "coal"), max_kinds: int = 5, max_count: int = 16
) -> st.SearchStrategy[dict[str, int]]:
    """Start inventories: up to ``max_kinds`` item kinds, 1 to ``max_count`` of each."""
    names = tuple(_kb().resolve(name) for name in items)
    return st.dictionaries(st.sampled_from(names), st.integers(1, max_count), max_size=max_kinds)


def states(max_layer: int = 0, **inventory_options) -> st.SearchStrategy[State]:
    """:class:`State` from :func:`inventories` and a layer from 0 (surface) to ``max_layer``."""
    return st.builds(
        lambda held, layer: State.start(held, layer), inventories(**inventory_options), st.integers(0, max_layer)
    )


@st.composite
def plans(draw, goal_strategy=None, start_strategy=None) -> Plan:
    """A valid plan for a drawn goal (from a drawn start state, when ``start_strategy`` is given)."""
    from ..planner import PlanningError
    from ..validation import Validator

    goal = draw(goal_strategy if goal_strategy is not None else goals())
    start = draw(start_strategy) if start_strategy is not None else None
    try:
        result = _symbolic().plan(goal, start) if start is not None else _symbolic().plan(goal)
    except PlanningError:
        from hypothesis import assume

        assume(False)
    plan = result.plan
    assert Validator(_kb()).validate(plan, goal=goal, start=start).valid, "the symbolic planner's plans are valid"
    return plan


FAULTS = ("drop", "swap", "cut", "insert", "change")
#: steps an ``insert`` fault puts in: each wrong somewhere (a clock without gold, a smelt without a furnace)
FOREIGN = (
    Step(type=StepType.CRAFT, item="clock", count=1),
    Step(type=StepType.CRAFT, item="torch", count=4),
    Step(type=StepType.SMELT, item="glass", count=2),
    Step(type=StepType.MINE, item="diamond", count=1),
    Step(type=StepType.CRAFT, item="chest", count=1),
    Step(type=StepType.MINE, item="logs", count=2),
)


@st.composite
def faulty_plans(draw, plan_strategy=None, faults: tuple[str, ...] = FAULTS) -> tuple[Plan, str]:
    """(plan with one fault, what was done): ``drop step 3``, ``swap steps 2 and 3``, ``cut the count of step 4``,
    ``insert craft 1 clock before step 2``, ``change step 5 to craft 3 stick``.

    Drop, insert and change (cut is a change) are one step deleted, inserted or changed: a plan one edit
    away from a valid one. ``faults`` limits the kinds drawn. The fault need not make the plan invalid (a
    dropped step may be spare): that is for the checker under test to find out.
    """
    from hypothesis import assume

    plan = draw(plan_strategy if plan_strategy is not None else plans())
    assume(len(plan.steps) >= 1)  # a start that already holds the goal has nothing to break
    steps_ = list(plan.steps)
    counted = [i for i, s in enumerate(steps_) if (s.count or 0) > 1]
    possible = [f for f in faults if (f != "swap" or len(steps_) > 1) and (f != "cut" or counted)]
    assume(possible)
    fault = draw(st.sampled_from(possible))
    if fault in ("insert", "change"):
        i = draw(st.integers(0, len(steps_) - (1 if fault == "change" else 0)))
        if fault == "insert":
            new = draw(st.sampled_from(FOREIGN))
            steps_.insert(i, new)
            what = f"insert {new} before step {i + 1}"
            return Plan(steps=tuple(steps_), source=what), what
        old = steps_[i]
        options = [s for s in FOREIGN if s != old]
        if old.count is not None:
            counts = sorted({old.count + 1, 2 * old.count, 1} - {old.count})
            options += [old.model_copy(update={"count": n}) for n in counts]
        new = draw(st.sampled_from(options))
        steps_[i] = new
        what = f"change step {i + 1} to {new}"
        return Plan(steps=tuple(steps_), source=what), what
    if fault == "drop":
        i = draw(st.integers(0, len(steps_) - 1))
        del steps_[i]
        what = f"drop step {i + 1}"
    elif fault == "swap":
        i = draw(st.integers(0, len(steps_) - 2))
        steps_[i], steps_[i + 1] = steps_[i + 1], steps_[i]
        what = f"swap steps {i + 1} and {i + 2}"
    else:
        i = draw(st.sampled_from(counted))
        steps_[i] = steps_[i].model_copy(update={"count": steps_[i].count - 1})
        what = f"cut the count of step {i + 1}"
    return Plan(steps=tuple(steps_) or plan.steps[:1], source=what), what


@lru_cache(maxsize=4)
def _simulator(rules: str | None):
    from ..validation import Validator

    return Validator(_kb(), rules).sim


@st.composite
def runnable_plans(
    draw, start: State, candidates: Callable[[State], Iterable[Step]], rules: str | None = None, max_steps: int = 14
) -> tuple[Plan, State]:
    """(plan, the state it ends in): up to ``max_steps`` steps drawn one by one among ``candidates(state)``
    that run from the state reached (under ``rules``): a plan valid from ``start`` by construction, for
    checking that a planner finds a plan wherever the validator accepts one. Ends early where none runs."""
    sim, state, steps_ = _simulator(rules), start, []
    for _ in range(draw(st.integers(1, max_steps))):
        runs = []
        for step in candidates(state):
            moved = sim.transition(step, state)
            if not isinstance(moved, Failure):
                runs.append((step, moved.state))
        if not runs:
            break
        step, state = draw(st.sampled_from(runs))
        steps_.append(step)
    return Plan(steps=tuple(steps_)), state


def steps(
    items=TECH_TREE + ("logs", "cobblestone", "iron_ore", "coal"), max_count: int = 16
) -> st.SearchStrategy[Step]:
    """Well-formed steps (not necessarily applicable anywhere) over ``items``, with digs and climbs."""
    names = tuple(_kb().resolve(name) for name in items)
    tools = (None, "wooden_pickaxe", "stone_pickaxe", "iron_pickaxe")
    made = st.builds(
        Step,
        type=st.sampled_from((StepType.CRAFT, StepType.SMELT, StepType.MINE)),
        item=st.sampled_from(names),
        count=st.integers(1, max_count),
        tool=st.sampled_from(tools),
    )
    moves = st.one_of(
        st.builds(Step, type=st.just(StepType.DIG_DOWN), tool=st.sampled_from(tools[1:])),
        st.just(Step(type=StepType.CLIMB_UP)),
    )
    return st.one_of(made, made, moves)
