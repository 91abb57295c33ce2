"""A gym-style environment over barsym's execution worlds, for agent research.

An agent that is not a planner -- a policy trained step by step, an LLM that
acts without planning ahead -- needs the world one step at a time, not a whole
plan at once. :class:`CraftingEnv` gives it that with the familiar shape:
``reset(seed) -> Observation`` and ``step(action) -> EnvStep(observation,
reward, done, info)`` (a named tuple, so ``obs, reward, done, info =
env.step(a)`` works), over the same worlds ``barsym execute`` runs plans in,
with the same seeds: an agent that takes a plan's steps in order meets exactly
the episode :func:`barsym.sim.execution.play` plays. No gym package is needed.

- **actions** are :class:`~barsym.model.Step` objects or BAR records
  (``{"type": "craft", "obj_name": "stick", "obj_num": 4}``);
  :attr:`CraftingEnv.actions` lists the ones that matter for the goal (every
  kind of step in the symbolic planner's plan for it, one unit at a time, and
  the climbs and digs), which is what a random agent samples from;
- **reward** is 1.0 on the step that reaches the goal, else 0.0;
- **done** when the goal is held, when the episode budget has run out, or
  after ``max_steps`` actions (``info["truncated"]``);
- a step that fails (cannot run; or the world's chance: a tool broke, the
  controller fumbled) changes what the world says it changes, and the episode
  goes on; ``info["failure"]`` says why.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from .model import Goal, Step, StepType
from .sim import State
from .sim.rollout import goal_failure
from .sim.world import World, WorldCode, WorldFailure, WorldState

__all__ = ["CraftingEnv", "EnvStep", "Observation"]


@dataclass(frozen=True)
class Observation:
    """What the agent sees: its inventory, where it stands, the time, and how far the goal is."""

    inventory: Mapping[str, int]
    layer: int
    layer_name: str
    ticks: int
    time_left: float
    goal: Goal
    held: int  # units of the goal in the inventory
    steps: int  # actions taken in this episode


class EnvStep(NamedTuple):
    observation: Observation
    reward: float
    done: bool
    info: dict


@dataclass
class CraftingEnv:
    """One goal in one world; ``reset`` starts an episode, ``step`` takes one action in it."""

    goal: str | Goal
    count: int = 1
    world: str | World = "stochastic"
    start: Mapping[str, int] | None = None
    layer: int = 0
    budget: int | None = None  # ticks per episode; default: the world's budget for the goal's plan
    max_steps: int = 200
    rules: str | None = None
    _state: WorldState | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from .api import knowledge_base
        from .sim.stochastic import StochasticWorld
        from .sim.world import DeterministicWorld

        self.kb = knowledge_base()
        if not isinstance(self.goal, Goal):
            self.goal = Goal(item=self.kb.resolve(self.goal), count=self.count)
        if isinstance(self.world, str):
            kinds = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}
            if self.world not in kinds:
                raise ValueError(f"world must be one of {', '.join(kinds)}, got {self.world!r}")
            self.world = kinds[self.world](self.kb, self.rules)
        self.start_state = State.start({self.kb.resolve(k): v for k, v in (self.start or {}).items()}, self.layer)
        plan = self._plan()
        if self.budget is None:
            self.budget = self.world.default_budget(plan.steps, self.start_state)
        self.actions: tuple[Step, ...] = self._actions(plan)
        self._done = True

    def _plan(self):
        from .planner import make_planner

        return make_planner("symbolic", self.kb, rules=self.rules).plan(self.goal, self.start_state).plan

    def _actions(self, plan) -> tuple[Step, ...]:
        seen: dict[tuple, Step] = {}
        for step in plan.steps:
            one = step if step.type.moves else step.model_copy(update={"count": 1})
            seen.setdefault((one.type, one.item, one.tool), one)
        climb = Step(type=StepType.CLIMB_UP)
        seen.setdefault((climb.type, None, None), climb)
        return tuple(seen.values())

    # -- gym's interface ------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> Observation:
        """A new episode from the start state; the same seed gives the same episode for the same actions."""
        self._state = self.world.reset(random.randrange(2**32) if seed is None else seed, self.start_state,
                                       self.budget)
        self._done = False
        return self.observation

    def step(self, action: Step | Mapping[str, Any], later: Sequence[Step] = ()) -> EnvStep:
        """Take one action. ``later``: the steps the agent still means to take (a smelt keeps fuel for them,
        as in a plan's execution); an agent that passes them while following a plan meets
        :func:`~barsym.sim.execution.play`'s episode exactly."""
        if self._state is None or self._done:
            raise RuntimeError("call reset() first: the episode is over or has not started")
        if not isinstance(action, Step):
            from .bar_io import step_from_record

            action = step_from_record(dict(action), "action")
        result = self.world.step(self._state, action, tuple(later))
        self._state = result.state
        reached = goal_failure(self.kb, self.goal, self._state.state) is None
        out_of_time = result.failure is not None and result.failure.code is WorldCode.OUT_OF_TIME
        truncated = not reached and self._state.steps >= self.max_steps
        self._done = reached or out_of_time or truncated
        info = {"ticks": result.ticks, "failure": result.failure, "truncated": truncated, "success": reached}
        return EnvStep(self.observation, 1.0 if reached else 0.0, self._done, info)

    @property
    def observation(self) -> Observation:
        if self._state is None:
            raise RuntimeError("call reset() first")
        s = self._state
        names = self.kb.layers
        return Observation(MappingProxyType(dict(s.state.inventory)), s.state.layer,
                           names[s.state.layer] if s.state.layer < len(names) else str(s.state.layer), s.ticks,
                           s.time_left, self.goal, s.state.count(self.goal.item), s.steps)

    @property
    def done(self) -> bool:
        return self._done

    def sample(self, rng: random.Random | None = None) -> Step:
        """A random action from :attr:`actions` (a random agent's policy)."""
        return (rng or random).choice(self.actions)


def failure_text(failure: WorldFailure | None) -> str:
    return "" if failure is None else f"{failure.code.value}: {failure.message}"
