"""Execution worlds: play a plan's steps in a world and see what happens, step by step.

BAR's stage memory ranks decompositions by how often the plans that used them
*succeed when executed*, and DEPS replans from the *description of a failed
execution*. Both need an execution layer with a small interface, in the
spirit of unified-planning's sequential simulator:

- ``world.reset(seed, start, budget)`` starts an episode: a :class:`WorldState`
  (the agent's :class:`~barsym.sim.state.State`, ticks spent, tool wear, and
  the episode's seed);
- ``world.step(state, step, later)`` executes one step and returns a
  :class:`StepResult`: the new world state, the ticks the step took, and a
  :class:`WorldFailure` (with a :class:`~barsym.sim.failure.Code` or a
  :class:`WorldCode`) if it failed. ``later`` are the plan's remaining steps,
  which the fuel rule keeps from being burned.

World states are immutable and a step's randomness is keyed by the episode's
seed and the number of steps taken, so the same state and step give the same
result in any process, and an agent may branch from any state.

Two worlds: :class:`DeterministicWorld` here (today's simulator: a step
succeeds exactly when it is applicable and costs its nominal ticks) and
:class:`~barsym.sim.stochastic.StochasticWorld`. :func:`barsym.sim.execution.run`
plays whole plans many times.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

from ..kb import KnowledgeBase, Rules, rules_for
from ..model import Step, StepType
from .costs import StepCosts
from .failure import Code, Failure
from .rollout import future_demand
from .simulator import Simulator, Transition
from .state import State

SEED_MASK = (1 << 64) - 1
#: simulator answers a world remembers before it starts afresh (a few MB at most)
TRANSITIONS_KEPT = 50_000


class WorldCode(str, Enum):
    """Why a step that *could* run failed in the world (the simulator's :class:`Code` says why one cannot)."""

    TOOL_BROKE = "tool_broke"  # the tool wore out mid-step and no other that can do the job is at hand
    CONTROLLER_FAILED = "controller_failed"  # the controller fumbled the step
    MOB_ESCAPED = "mob_escaped"  # the hunted mobs kept getting away; the controller gave up
    OUT_OF_TIME = "out_of_time"  # the episode budget ran out during the step


@dataclass(frozen=True)
class WorldFailure:
    code: Code | WorldCode
    message: str
    item: str | None = None
    cause: Failure | None = None  # the simulator's own failure, when the step could not run at all

    @classmethod
    def cannot_run(cls, failure: Failure) -> "WorldFailure":
        return cls(failure.code, failure.message, failure.item, failure)


@dataclass(frozen=True)
class WorldState:
    """Where an episode stands: the agent's state, ticks spent, the uses worn off tools in hand, and its seed."""

    state: State
    ticks: int = 0
    budget: int | None = None  # ticks the episode may last; None: no limit
    wear: tuple[tuple[str, int], ...] = ()  # (tool, uses spent) for the one of each name in use
    seed: int = 0
    steps: int = 0  # steps taken; with ``seed`` it keys the next step's randomness

    @property
    def time_left(self) -> float:
        return math.inf if self.budget is None else self.budget - self.ticks

    def uses(self, tool: str) -> int:
        return dict(self.wear).get(tool, 0)


@dataclass(frozen=True)
class StepResult:
    state: WorldState  # after the step; after a failure, where the agent stands (what it holds)
    ticks: int  # ticks the step took (up to the failure)
    failure: WorldFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class World(ABC):
    """A world plans are executed in; subclasses decide what a step costs and how it may fail."""

    name = "world"

    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None):
        self.kb = kb
        self.rules = rules_for(kb, rules)
        self.sim = Simulator(kb, self.rules)
        self._transitions: dict[tuple, Transition | Failure] = {}

    def reset(self, seed: int = 0, start: State | None = None, budget: int | None = None) -> WorldState:
        """Start an episode from ``start`` (empty inventory on the surface by default)."""
        return WorldState(start or State(), budget=budget, seed=seed & SEED_MASK)

    @abstractmethod
    def step(self, state: WorldState, step: Step, later: Sequence[Step] = ()) -> StepResult:
        """Execute ``step`` from ``state``; ``later`` are the steps still to come (fuel is kept for them)."""

    def default_budget(self, steps: Sequence[Step], start: State | None = None) -> int | None:
        """The episode budget of a plan when the caller names none (None: no limit)."""
        return None

    # ---- shared by the worlds ---------------------------------------------------------
    def transition(self, step: Step, state: State, later: Sequence[Step] = ()) -> Transition | Failure:
        """The simulator's verdict on ``step`` from ``state``: whether it can run at all, and what it makes.

        Remembered: the runs of one plan pass through the same states until
        chance makes them differ, and the simulator is pure, so its answer for
        a (step, state) pair (and, for a smelt, the steps after it, which decide
        the fuel it may burn) never changes.
        """
        smelt = step.type is StepType.SMELT and bool(later)
        key = (step, state, tuple(later)) if smelt else (step, state)
        found = self._transitions.get(key)
        if found is None:
            reserve = future_demand(self.rules, later, state) if smelt else {}
            found = self.sim.transition(step, state, reserve)
            if len(self._transitions) >= TRANSITIONS_KEPT:
                self._transitions.clear()
            self._transitions[key] = found
        return found

    @staticmethod
    def finish(
        before: WorldState,
        ticks: float,
        after: State,
        wear: tuple[tuple[str, int], ...] | None = None,
        failure: WorldFailure | None = None,
        progress: str = "",
    ) -> StepResult:
        """The step's result, with the budget applied: a step that would end after it fails ``out_of_time``.

        ``progress`` says how far the step had got when time ran out (``1 of 3 diamond mined``).
        """
        spent = math.ceil(ticks)
        if spent > before.time_left:
            left = int(before.time_left)
            done = f" ({progress})" if progress else ""
            failure = WorldFailure(
                WorldCode.OUT_OF_TIME,
                f"the episode budget of {before.budget:,} ticks ran out {left:,} ticks into the step{done}",
            )
            state = replace(before, ticks=before.budget, steps=before.steps + 1)
            return StepResult(state, left, failure)
        state = WorldState(
            after,
            before.ticks + spent,
            before.budget,
            before.wear if wear is None else wear,
            before.seed,
            before.steps + 1,
        )
        return StepResult(state, spent, failure)


class DeterministicWorld(World):
    """Today's simulator as a world: a step succeeds exactly when it is applicable, at its nominal cost.

    Nominal ticks are the stochastic world's expected costs (mean search
    times, break times, smelting times; no tool wear, no controller failures),
    so both worlds speak of the same time. Only a budget the caller sets can
    make a step fail here besides the simulator's own failures.
    """

    name = "deterministic"

    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None):
        super().__init__(kb, rules)
        self.costs = StepCosts(self.rules, kb.world)

    def step(self, state: WorldState, step: Step, later: Sequence[Step] = ()) -> StepResult:
        move = self.transition(step, state.state, later)
        if isinstance(move, Failure):
            return StepResult(replace(state, steps=state.steps + 1), 0, WorldFailure.cannot_run(move))
        return self.finish(state, self.costs.nominal(step, state.state, move), move.state)


def deepest_layer(kb: KnowledgeBase, steps: Sequence[Step], start: State | None = None) -> int:
    """The deepest layer a plan works on: where its dig downs lead, or where its resources are found."""
    rules = rules_for(kb)
    layer = deepest = (start or State()).layer
    for step in steps:
        layer = rules.next_layer(layer, step.type.value)
        found = rules.step_layers(step)
        if found:
            deepest = max(deepest, min(found))
        deepest = max(deepest, layer)
    return deepest
