"""DEPS' selector: among the sub-goals that can run now, take the one with the smallest predicted horizon.

DEPS (Wang et al. 2023) orders parallel sub-goals with a horizon-predictive selector: a model trained to
predict how many steps each goal takes from the current state, so that a near goal (a sheep seen now)
goes before a far one. Here a plan's steps are the goals and the execution world is the game:

- **which steps can run now**: those the plan has not done whose needs (the
  planner's :attr:`~barsym.planner.result.PlanResult.needs`: ingredient, tool,
  station, layer, fuel) are all done, and that the simulator finds applicable
  in the current state (:func:`ready`);
- **the horizon**: the ticks a step takes from the current state. The
  :class:`HorizonModel` predicts it from a few state features (the step's kind
  and count; for mining, the mean search time for the resource where the
  agent stands and the break time of a block with the tool in hand; for
  crafting, the batches) by least squares, fitted on rollouts of plans in the
  stochastic world (:func:`collect`), so it learns what the world really
  costs, wear and bad luck included;
- **the baselines** it is compared with (bench/bench_selector.py): the plan's
  own order, a seeded random pick, and the crafting graph's cost estimate
  (:attr:`~barsym.graph.CraftGraph.costs`, the effort of an item's whole
  sub-tree, times the count), which ranks by what an item needs overall
  rather than by what is left to do from here.

The deps planner runs its own rounds through :func:`execute` when given a selector other than plan order
(:func:`make_selector`). A model's plan comes without needs, so :func:`plan_needs` reads them off one run
of the plan as written; its horizon model is fitted once per process on rollouts of the symbolic
planner's plans for a few fixed goals (:func:`trained_horizon`).

No language model and no numpy: the regression has a handful of features and is solved here by Gaussian
elimination on its normal equations.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import sim  # the execution worlds' names (sim.WorldFailure, sim.Episode) load when an episode runs
from ..graph import CraftGraph, item_node
from ..model import Goal, Step, StepType
from ..sim import Code, Failure, State, goal_failure
from ..sim.costs import StepCosts

if TYPE_CHECKING:
    from ..sim import Episode, World, WorldFailure, WorldState

KINDS = (StepType.MINE, StepType.CRAFT, StepType.SMELT, StepType.KILL, StepType.DIG_DOWN, StepType.CLIMB_UP)


def ready(world: World, steps: Sequence[Step], needs, done: set[int], state: State) -> list[int]:
    """Plan positions that can run now: not done, every need done, and applicable in ``state``."""
    waiting: dict[int, set[int]] = {}
    for before, after, _role in needs:
        waiting.setdefault(after, set()).add(before)
    out = []
    for i, step in enumerate(steps):
        if i in done or not waiting.get(i, set()) <= done:
            continue
        later = [s for j, s in enumerate(steps) if j not in done and j != i]
        if not isinstance(world.transition(step, state, later), Failure):
            out.append(i)
    return out


def goals_first(steps: Sequence[Step], options: list[int]) -> list[int]:
    """The ready steps that are goals (they make an item); layer moves only when no goal can run.

    A dig down is not a sub-goal beside the others: taken early, it leaves
    the surface's goals behind for good (BAR's agent never climbs back).
    """
    goals = [i for i in options if not steps[i].type.moves]
    return goals or options


def plan_needs(world: World, steps: Sequence[Step], start: State | None = None) -> tuple[tuple[int, int, str], ...]:
    """The needs of a plan that came without any (a model's), read off one run of it as written.

    Step ``j`` needs every earlier step that made an item ``j`` consumes, burns
    or relies on (every one, not the last: the counts then add up in any order
    the needs allow). A layer move is a barrier: it needs every step before it
    and every step after it needs it, since the agent does not go back for
    what it left. The first step that cannot run as written needs every step
    before it, and each later one the one before it: the plan's order is all
    that is known there.
    """
    state = start or State()
    made: dict[str, list[int]] = {}
    barrier: int | None = None
    needs: set[tuple[int, int, str]] = set()
    for j, step in enumerate(steps):
        move = world.transition(step, state, steps[j + 1 :])
        if isinstance(move, Failure):
            rest = {(i, j, "order") for i in range(j)} | {(k - 1, k, "order") for k in range(j + 1, len(steps))}
            return tuple(sorted(needs | rest))
        if step.type.moves:
            needs |= {(i, j, "layer") for i in range(j)}
            barrier = j
        elif barrier is not None:
            needs.add((barrier, j, "layer"))
        for role, items in (("ingredient", move.consumed), ("fuel", move.fuel), ("tool", move.used)):
            needs |= {(i, j, role) for item in items for i in made.get(item, ())}
        for item in move.produced:
            made.setdefault(item, []).append(j)
        state = move.state
    return tuple(sorted(needs))


class Features:
    """The state features a horizon is predicted from (one vector per step and state)."""

    def __init__(self, world: World):
        self.world = world
        self.costs = StepCosts(world.rules, world.kb.world)

    def __call__(self, step: Step, state: State, later: Sequence[Step] = ()) -> list[float]:
        kind = [1.0 if step.type is k else 0.0 for k in KINDS]
        count = float(step.count or 1)
        search = per_block = batches = 0.0
        move = self.world.transition(step, state, later)
        if step.type in (StepType.MINE,) and not isinstance(move, Failure):
            found, mean = self.costs.resource(move.item, state.layer)
            gather = self.world.rules.action("mine", move.item, step.count or 1)
            tool = self.world.rules.worn_tool(move.used)
            blocks = math.ceil(count / found.mean_yield)
            search = math.ceil(blocks / found.cluster) * mean / 1000.0
            per_block = blocks * self.costs.gather_unit(gather, tool)[0] / 1000.0
        elif step.type is StepType.CRAFT and not isinstance(move, Failure):
            fit = self.world.rules.fitting_recipe(move.item, step.count, state.counts)
            batches = float(fit.batches if fit is not None else 1)
        elif step.type is StepType.DIG_DOWN:
            per_block = float(self.costs.dig_levels(min(state.layer, len(self.world.kb.layers) - 2))) / 10.0
        return kind + [count * k for k in kind] + [search, per_block, batches, float(state.layer)]


def solve(rows: list[list[float]], targets: list[float], ridge: float = 1e-3) -> list[float]:
    """Least squares ``argmin |Xw - y|^2 + ridge |w|^2`` through the normal equations."""
    n = len(rows[0])
    a = [[ridge * (i == j) for j in range(n)] for i in range(n)]
    b = [0.0] * n
    for x, y in zip(rows, targets):
        for i in range(n):
            if x[i]:
                b[i] += x[i] * y
                for j in range(n):
                    a[i][j] += x[i] * x[j]
    for col in range(n):  # Gaussian elimination with partial pivoting
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        if abs(a[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            if f:
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
                b[r] -= f * b[col]
    w = [0.0] * n
    for i in reversed(range(n)):
        if abs(a[i][i]) >= 1e-12:
            w[i] = (b[i] - sum(a[i][j] * w[j] for j in range(i + 1, n))) / a[i][i]
    return w


@dataclass
class HorizonModel:
    """Predicted ticks of a step from the current state: a linear model on :class:`Features`."""

    weights: list[float]
    features: Features

    def predict(self, step: Step, state: State, later: Sequence[Step] = ()) -> float:
        return self.predict_vector(self.features(step, state, later))

    def predict_vector(self, x: list[float]) -> float:
        return sum(w * v for w, v in zip(self.weights, x))

    @classmethod
    def fit(cls, samples: list[tuple[list[float], float]], features: Features) -> "HorizonModel":
        if not samples:
            raise ValueError("no rollout samples to fit the horizon model on")
        return cls(solve([x for x, _ in samples], [y for _, y in samples]), features)


def collect(
    world: World, plans: Sequence[tuple[Sequence[Step], tuple]], episodes: int, seed: int, features: Features
) -> list[tuple[list[float], float]]:
    """(features, ticks) of every step that succeeded in ``episodes`` rollouts of each (steps, needs) plan.

    The next step is drawn at random among those ready, so the model sees
    each step from the many states a selector could bring it to.
    """
    samples = []
    for p, (steps, needs) in enumerate(plans):
        for e in range(episodes):
            rng = random.Random(seed * 1_000_003 + p * 7919 + e)
            ws = world.reset(rng.getrandbits(63), budget=None)
            done: set[int] = set()
            while len(done) < len(steps):
                options = ready(world, steps, needs, done, ws.state)
                if not options:
                    break
                i = rng.choice(options)
                later = [s for j, s in enumerate(steps) if j not in done and j != i]
                x = features(steps[i], ws.state, later)
                result = world.step(ws, steps[i], later)
                if result.failure is not None:
                    break
                samples.append((x, float(result.ticks)))
                ws = result.state
                done.add(i)
    return samples


class Selector:
    """Picks one of the ready plan positions; subclasses say how."""

    name = "selector"

    def pick(self, options: list[int], steps: Sequence[Step], state: State, done: set[int]) -> int:
        raise NotImplementedError


class PlanOrder(Selector):
    name = "plan order"

    def pick(self, options, steps, state, done):
        return min(options)


class RandomPick(Selector):
    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def pick(self, options, steps, state, done):
        return self.rng.choice(sorted(options))


class GraphCost(Selector):
    """The crafting graph's effort estimate of the step's item (its whole sub-tree), times the count."""

    name = "graph cost"

    def __init__(self, graph: CraftGraph):
        self.costs = graph.costs

    def score(self, step: Step, state: State) -> float:
        if step.item is None:
            return self.costs.get(f"layer:{state.layer + 1}", 1.0)
        return self.costs.get(item_node(step.item), 1.0) * (step.count or 1)

    def pick(self, options, steps, state, done):
        return min(options, key=lambda i: (self.score(steps[i], state), i))


class Horizon(Selector):
    """DEPS' selector: the smallest predicted horizon from the current state."""

    name = "horizon (learned)"

    def __init__(self, model: HorizonModel):
        self.model = model

    def pick(self, options, steps, state, done):
        def later(i):
            return [s for j, s in enumerate(steps) if j not in done and j != i]

        return min(options, key=lambda i: (self.model.predict(steps[i], state, later(i)), i))


#: the selectors by the names the deps planner and ``--selector`` take; ``order`` plays the plan as written
SELECTORS = ("order", "random", "graph", "horizon")
#: the goals whose symbolic plans a planner's horizon model is rolled out on: DEPS' kinds of task (wood,
#: stone, iron, mobs, smelting, tools), small enough that the fit takes well under a second
TRAINING_GOALS = (
    "wooden_pickaxe",
    "stone_pickaxe",
    "furnace",
    "white_bed",
    "iron_pickaxe",
    "bucket",
    "chest",
    "torch",
    "painting",
    "shears",
)
TRAINING_EPISODES = 20
TRAINING_SEED = 1
_horizons: dict[tuple[int, str, str], tuple[object, HorizonModel]] = {}


def trained_horizon(world: World) -> HorizonModel:
    """The horizon model for ``world``, fitted once per process on rollouts of the symbolic planner's plans.

    Seeded (:data:`TRAINING_SEED`) and over fixed goals, so every process
    fits the same model and a planner's results do not depend on what ran
    before it; kept per knowledge base, world and rule profile.
    """
    key = (id(world.kb), world.name, world.rules.name)
    cached = _horizons.get(key)
    if cached is None or cached[0] is not world.kb:
        from .decomposer import PlanningError
        from .registry import symbolic_planner

        planner = symbolic_planner(world.kb, rules=world.rules)
        plans = []
        for item in TRAINING_GOALS:
            try:
                result = planner.plan(Goal(item=item, count=1))
            except PlanningError:  # a rule profile that cannot make it
                continue
            plans.append((result.plan.steps, tuple(result.needs)))
        features = Features(world)
        model = HorizonModel.fit(collect(world, plans, TRAINING_EPISODES, TRAINING_SEED, features), features)
        cached = _horizons[key] = (world.kb, model)
    return cached[1]


def make_selector(name: str, world: World, graph: CraftGraph, seed: int = 0) -> Selector:
    """The selector called ``name`` (one of :data:`SELECTORS`); ``random`` draws from ``seed``."""
    if name == "order":
        return PlanOrder()
    if name == "random":
        return RandomPick(seed)
    if name == "graph":
        return GraphCost(graph)
    if name == "horizon":
        return Horizon(trained_horizon(world))
    raise ValueError(f"--selector must be one of {', '.join(SELECTORS)}, got {name!r}")


@dataclass(frozen=True)
class Outcome:
    """An episode driven by a selector: how it ended, where it failed, and the order the steps ran in."""

    success: bool
    ticks: int
    choices: int  # points where more than one step could run
    seed: int = 0
    order: tuple[int, ...] = ()  # plan positions in the order they were run (a failed one last)
    failure: WorldFailure | None = None
    failed_step: int | None = None  # 1-based plan position; None for the goal missing at the end
    at_failure: WorldState | None = None

    def episode(self) -> Episode:
        """The same run as an :class:`~barsym.sim.Episode`, which :func:`~barsym.sim.execution.describe` reads."""
        return sim.Episode(self.seed, self.success, self.ticks, self.failure, self.failed_step, self.at_failure)


def execute(
    world: World,
    steps: Sequence[Step],
    needs,
    selector: Selector,
    goal: Goal,
    seed: int,
    budget: int | None,
    start: State | None = None,
) -> Outcome:
    """One episode in which ``selector`` picks the next step whenever several can run.

    When nothing can run, the failure reported is that of the first unfinished
    step in plan order that cannot run, as playing the plan as written would
    report it (needs point from earlier to later steps, so that step's are done).
    """
    ws: WorldState = world.reset(seed, start, budget)
    done: set[int] = set()
    order: list[int] = []
    choices = 0
    while len(done) < len(steps):
        options = goals_first(steps, ready(world, steps, needs, done, ws.state))
        if not options:
            failed, failure = _stuck(world, steps, done, ws.state)
            return Outcome(False, ws.ticks, choices, ws.seed, tuple(order), failure, failed, ws)
        choices += len(options) > 1
        i = options[0] if len(options) == 1 else selector.pick(options, steps, ws.state, done)
        later = [s for j, s in enumerate(steps) if j not in done and j != i]
        result = world.step(ws, steps[i], later)
        ws = result.state
        order.append(i)
        if result.failure is not None:
            return Outcome(False, ws.ticks, choices, ws.seed, tuple(order), result.failure, i + 1, ws)
        done.add(i)
    missing = goal_failure(world.kb, goal, ws.state)
    if missing is not None:
        return Outcome(False, ws.ticks, choices, ws.seed, tuple(order), sim.WorldFailure.cannot_run(missing), None, ws)
    return Outcome(True, ws.ticks, choices, ws.seed, tuple(order))


def _stuck(world: World, steps: Sequence[Step], done: set[int], state: State) -> tuple[int | None, WorldFailure]:
    """Why an episode with nothing ready stops: the first unfinished step that cannot run, 1-based, and why."""
    for i, step in enumerate(steps):
        if i not in done:
            move = world.transition(step, state, [s for j, s in enumerate(steps) if j not in done and j != i])
            if isinstance(move, Failure):
                return i + 1, sim.WorldFailure.cannot_run(move)
    return None, sim.WorldFailure(Code.GOAL_NOT_REACHED, "the plan's needs leave no step that can run")
