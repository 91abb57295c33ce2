"""Which tasks the training data may use: teach knowledge, hold out tasks.

The distilled model is judged on BAR's 53 tasks and DEPS' 70, each a goal from the empty start.
The LLMs of those papers know the game's recipes from pretraining; a 135M model must be taught
them, so **knowledge may be taught for every item of the rule book**: how it is obtained, each
way's inputs and output count, station, tool, layer, fuel (:mod:`.knowledge`), and the names
players use for items (``data/recipes/aliases.json``). What **must not** be taught:

1. a whole plan -- CoT's, DEPS', or BAR's chained replies for one plan -- whose top-level goal
   is an evaluation goal from its evaluation start (:func:`is_evaluation_task`): the plans of
   the evaluation's own items are taught only from other starts (:func:`other_start`,
   :func:`starts_keeping_inputs`), never from the empty one nor from a state on the way of their own plan;
2. the sentences of the evaluation prose (``tests/data/paraphrases.json``; the parse examples
   use word lists of their own, :mod:`.prose_data`);
3. the labelled step-score plans (BAR's expert plans and their faulty variants,
   :mod:`barsym.consistency.step_set`): the verdict examples are played on the plans of the other
   items only (:data:`GoalPool.goals`).

``tests/test_distill_rule.py`` regenerates the shipped adapter's data from its card's command and
checks all three.

Start states for the forward planners of the other items come from the oracle's own plans: the
inventory after a random prefix of the plan, so every start is one a real episode passes through.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..eval.dataset import load_dataset, resolve_dataset
from ..kb import KnowledgeBase, Rules
from ..model import Goal, Plan
from ..planner.decomposer import PlanningError
from ..sim import DeterministicWorld, State

HELD_OUT_DATASETS = ("bar", "deps")


def held_out_items(kb: KnowledgeBase) -> frozenset[str]:
    """The target items of the packaged BAR and DEPS task sets (canonical names)."""
    items: set[str] = set()
    for name in HELD_OUT_DATASETS:
        path, dialect = resolve_dataset(name)
        items |= {task.goal.item for task in load_dataset(path, kb, dialect)}
    return frozenset(items)


@dataclass(frozen=True)
class GoalPool:
    """The training goals (item, the oracle's plan from an empty inventory) and the held-out items."""

    goals: tuple[tuple[str, Plan], ...]
    held_out: frozenset[str]

    def items(self) -> list[str]:
        return [item for item, _ in self.goals]


def training_pool(kb: KnowledgeBase, symbolic, max_steps: int = 24) -> GoalPool:
    """Every craftable or smeltable item, not held out, that the oracle plans in at most ``max_steps`` steps."""
    held = held_out_items(kb)
    goals = []
    made = {action.item for action in Rules(kb).every_action() if action.kind in ("craft", "smelt")}
    for item in sorted(made):
        if item in held:
            continue
        try:
            plan = symbolic.plan(Goal(item=item, count=1)).plan
        except PlanningError:
            continue
        if 0 < len(plan.steps) <= max_steps:
            goals.append((item, plan))
    return GoalPool(tuple(goals), held)


def is_evaluation_task(held: frozenset[str], goal: Goal, start: State | None) -> bool:
    """Whether (``goal``, ``start``) is a task of BAR's or DEPS' evaluation: one of their items from the empty
    start, at any count (so no plan for 2 stone_pickaxe stands in for the held-out plan for 1)."""
    empty = start is None or not (start.inventory or start.layer)
    return goal.item in held and empty


def other_start(kb: KnowledgeBase, plan: Plan, rng: random.Random) -> State | None:
    """A start that is on no evaluation plan's way: one to three of ``plan``'s intermediate items (never its
    goal) in amounts drawn from 1 to twice what the plan makes of them, and, with a pickaxe among them, maybe
    the layer it digs to. None when the plan has nothing to draw from.

    Why not the state after a prefix of ``plan``: for an evaluation item that is its evaluation plan's own
    suffix. These starts ask for plans the evaluation never asks (an iron pickaxe from 2 sticks and 5
    cobblestone), so what carries over is how items are made, not a task's answer."""
    made: dict[str, int] = {}
    for step in plan.steps[:-1]:
        if step.item and step.count:
            made[step.item] = max(made.get(step.item, 0), step.count)
    if not made:
        return None
    names = rng.sample(sorted(made), min(len(made), rng.randint(1, 3)))
    inventory = {name: rng.randint(1, 2 * made[name]) for name in names}
    layer = 0
    picks = [n for n in names if n.endswith("_pickaxe")]
    if picks and rng.random() < 0.5:
        layer = min(kb.deepest_layer, max(1, Rules(kb).tier(picks[0])))
    return State.start(inventory, layer)


def starts_keeping_inputs(kb: KnowledgeBase, plan: Plan, rng: random.Random, tries: int = 3) -> list[State]:
    """Other starts for an evaluation item that keep every tool and every station of its plan: ``tries``
    starts holding one to three of what the plan makes before it first uses a tool (logs, planks, sticks; in
    a plan that uses none, what it makes before its last step, wool or leather too), never a tool, a station,
    or what is mined or made with a tool (cobblestone, iron ingots, diamonds, charcoal); at the surface. The
    caller teaches the first whose plan is far from the evaluation plan (:func:`far_from`), so only short
    plans (the stone tier's) are taught this way.

    Why: a 135M model reads the goal line more than the start line and carries what a start held to the
    empty start. :func:`other_start` may hold what the goal's recipe consumes (``2 cobblestone`` for a stone
    hoe: stage 8's model mined none); a first try at this function held one of the plan's pickaxes or its
    stations, and its model wrote ``dig down with wooden_pickaxe`` with no wooden pickaxe made in 28 of
    BAR's 53 (7/53 ran, stage 9 18/53). These starts hold only logs, planks and sticks, which every
    training goal's plan from the empty start makes, in the hope that the model writes them on its own:
    after ``craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table`` the reasoning goes on to
    ``mine 3 cobblestone``, where every training goal whose first line ends that way (banners, signs,
    fences) goes on to the crafting table. Measured (70 steps, docs/results/knows-the-game.md, "Stage 10"):
    the stone tools then mined their cobblestone but made no sticks; CoT 20/53, DEPS 43/70 (stage 9 45), not
    shipped. The kinds stay for a prompt in which the model reads its start."""
    rules = Rules(kb)
    tools = {step.tool for step in plan.steps if step.tool}
    stations = {a.station for s in plan.steps if s.item and (a := rules.step_action(s)) is not None and a.station}
    shallow: dict[str, int] = {}
    for step in plan.steps[:-1]:
        if step.tool is not None:
            break
        if step.item and step.count and step.item not in tools | stations:
            shallow[step.item] = max(shallow.get(step.item, 0), step.count)
    if not shallow:
        return []
    starts = []
    for _ in range(tries):
        names = rng.sample(sorted(shallow), min(len(shallow), rng.randint(1, 3)))
        starts.append(State.start({name: rng.randint(1, 2 * shallow[name]) for name in names}, 0))
    return starts


def far_from(plan: Plan, evaluation_plan: Plan) -> bool:
    """Whether ``plan`` is far from ``evaluation_plan``: BAR's step edit distance (counts compared) at least
    a third of the longer plan and at least 3 (so 'iron_pickaxe from 2 logs', the evaluation plan with one
    count changed, is not taught)."""
    from ..metrics import as_records, edit_distance

    distance = edit_distance(as_records(plan), as_records(evaluation_plan))
    return distance >= max(3, max(len(plan.steps), len(evaluation_plan.steps)) / 3)


def random_count(rng: random.Random) -> int:
    """Mostly 1 (as the benchmarks ask), sometimes a few."""
    return rng.choice((1, 1, 1, 1, 2, 3, 4))


def start_state(kb: KnowledgeBase, plan: Plan, rng: random.Random) -> State | None:
    """The state after a random proper prefix of ``plan`` (None: the empty start), as the deterministic world leaves it."""
    if len(plan.steps) < 2 or rng.random() < 0.5:
        return None
    cut = rng.randrange(1, len(plan.steps))
    world = DeterministicWorld(kb)
    state = world.reset(0, State())
    for i, step in enumerate(plan.steps[:cut]):
        result = world.step(state, step, plan.steps[i + 1 :])
        if result.failure is not None:
            return None
        state = result.state
    start = state.state
    return start if (start.inventory or start.layer) else None
