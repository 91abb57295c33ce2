"""Which goals the training data may use: every craftable item except the benchmarks' targets.

The distilled model is judged on BAR's 53 tasks and DEPS' 70. If their target
items were goals of training examples, a good score could be memorisation;
so they are held out, and the data is built from the other items the
knowledge base can craft or smelt and the symbolic planner can plan from an
empty inventory (~400 of them: dyes, slabs, stairs, boats, beds, ...). The
benchmark items still appear *inside* training plans (a plan for a boat
crafts planks), as they do inside the few-shot prompts; what is held out is
being the goal a prompt asks for.

Start states for the forward planners come from the oracle's own plans: the
inventory after a random prefix of the plan, so every start is one a real
episode passes through.
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
