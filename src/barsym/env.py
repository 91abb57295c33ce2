"""A Gymnasium environment over barsym's execution worlds, for agent research (``barsym/Crafting-v0``).

An agent that is not a planner -- a policy trained step by step, an LLM that
acts without planning ahead -- needs the world one step at a time, not a whole
plan at once. :class:`CraftingEnv` gives it that through the ``gymnasium`` API
(``pip install 'barsym[env]'``), so the usual tools (``check_env``, wrappers,
vector envs, RL libraries) work with it, over the same worlds ``barsym
execute`` runs plans in, with the same seeds: an agent that takes a plan's
steps in order meets exactly the episode :func:`barsym.sim.execution.play`
plays.

- **actions**: the action space is ``Discrete(len(env.actions))``, an index
  into :attr:`CraftingEnv.actions` (every kind of step in the symbolic
  planner's plan for the goal, one unit at a time, and the climbs and digs).
  ``step`` also takes any :class:`~barsym.model.Step`, a BAR record
  (``{"type": "craft", "obj_name": "stick", "obj_num": 4}``) or a step in
  barsym's notation (``"craft 4 stick"``); anything else is a ``ValueError``
  that says what is accepted;
- **observations**: a ``Dict`` space: ``inventory`` (a count per item of the
  knowledge base, in :attr:`CraftingEnv.items` order), ``layer``, ``held``
  (units of the goal), ``ticks`` and ``steps``; :attr:`CraftingEnv.observation`
  (and ``info["observation"]``) gives the same as named Python values;
- **reward** 1.0 on the step that reaches the goal, else 0.0;
- **terminated** when the goal is held; **truncated** when the episode's tick
  budget runs out or after ``max_steps`` actions;
- a step that fails (cannot run; or the world's chance: a tool broke, the
  controller fumbled) changes what the world says it changes, and the episode
  goes on; ``info["failure"]`` says why.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
except ImportError as exc:  # the [env] extra
    raise ImportError(f"barsym.env needs gymnasium ({exc}): pip install 'barsym[env]'") from None

from .model import Goal, Step, StepType
from .sim import State
from .sim.rollout import goal_failure
from .sim.world import World, WorldCode, WorldFailure, WorldState

__all__ = ["ENV_ID", "CraftingEnv", "Observation", "register_envs"]

ENV_ID = "barsym/Crafting-v0"
#: the largest count an observation holds (a count past it is shown as it)
MAX_OBSERVED = 2**31 - 1


@dataclass(frozen=True)
class Observation:
    """What the agent sees, as named Python values: inventory, where it stands, the time, how far the goal is."""

    inventory: Mapping[str, int]
    layer: int
    layer_name: str
    ticks: int
    time_left: float
    goal: Goal
    held: int  # units of the goal in the inventory
    steps: int  # actions taken in this episode


class CraftingEnv(gymnasium.Env):
    """One goal in one world; ``reset`` starts an episode, ``step`` takes one action in it."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        goal: str | Goal = "diamond_pickaxe",
        count: int = 1,
        world: str | World = "stochastic",
        start: Mapping[str, int] | None = None,
        layer: int = 0,
        budget: int | None = None,
        max_steps: int = 200,
        rules: str | None = None,
        render_mode: str | None = None,
    ):
        from .api import _goal, _start, knowledge_base, whole_argument
        from .sim.stochastic import StochasticWorld
        from .sim.world import DeterministicWorld

        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.kb = knowledge_base()
        whole_argument("layer", layer, 0, self.kb.deepest_layer)  # here, not as an IndexError at reset()
        whole_argument("max_steps", max_steps, 1)
        if budget is not None:
            whole_argument("budget", budget, 1)
        if goal is None:  # the API's _goal reads None as "no goal"; an environment needs one
            raise TypeError("goal must be an item name or a Goal, got None")
        self.goal = _goal(self.kb, goal, count)  # TypeError / ValueError naming goal or count, as barsym.plan
        self.rules = rules
        if isinstance(world, str):
            kinds = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}
            if world not in kinds:
                raise ValueError(f"world must be one of {', '.join(kinds)}, got {world!r}")
            world = kinds[world](self.kb, rules)
        self.world = world
        self.max_steps = max_steps
        self.start_state = _start(self.kb, start, layer) or State.start({}, layer)  # checked as barsym.plan's start
        plan = self._plan()
        self.budget = self.world.default_budget(plan.steps, self.start_state) if budget is None else budget
        self.actions: tuple[Step, ...] = self._actions(plan)
        self.items: tuple[str, ...] = tuple(sorted(self.kb.items))
        self._index = {name: i for i, name in enumerate(self.items)}
        self.action_space = spaces.Discrete(len(self.actions))
        count_box = spaces.Box(0, MAX_OBSERVED, shape=(1,), dtype=np.int64)
        self.observation_space = spaces.Dict(
            {
                "inventory": spaces.Box(0, MAX_OBSERVED, shape=(len(self.items),), dtype=np.int64),
                "layer": spaces.Discrete(len(self.kb.layers)),
                "held": count_box,
                "ticks": count_box,
                "steps": count_box,
            }
        )
        self._state: WorldState | None = None
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

    # -- gymnasium's interface --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """A new episode from the start state: ``(observation, info)``. The same seed gives the same
        episode for the same actions; without one, the world's seed comes from the env's generator."""
        super().reset(seed=seed)
        if options:
            raise ValueError(
                f"CraftingEnv.reset takes no options, got {sorted(options)}; "
                "set the goal, start and world when making the env"
            )
        world_seed = seed if seed is not None else int(self.np_random.integers(2**32))
        self._state = self.world.reset(world_seed, self.start_state, self.budget)
        self._done = False
        return self._observe(), self._info()

    def step(self, action: Any, later: Sequence[Step] = ()) -> tuple[dict, float, bool, bool, dict]:
        """Take one action: ``(observation, reward, terminated, truncated, info)``.

        ``later``: the steps the agent still means to take (a smelt keeps fuel
        for them, as in a plan's execution); an agent that passes them while
        following a plan meets :func:`~barsym.sim.execution.play`'s episode exactly.
        """
        if self._state is None or self._done:
            raise RuntimeError("call reset() first: the episode is over or has not started")
        step = self.as_step(action)
        result = self.world.step(self._state, step, tuple(later))
        self._state = result.state
        reached = goal_failure(self.kb, self.goal, self._state.state) is None
        out_of_time = result.failure is not None and result.failure.code is WorldCode.OUT_OF_TIME
        truncated = not reached and (out_of_time or self._state.steps >= self.max_steps)
        self._done = reached or truncated
        info = self._info(ticks=result.ticks, failure=result.failure, success=reached, action=step)
        return self._observe(), 1.0 if reached else 0.0, reached, truncated, info

    def render(self) -> str | None:
        """``ansi``: the episode in one line (inventory, layer, time); None without a render mode."""
        if self.render_mode != "ansi":
            return None
        o = self.observation
        held = ", ".join(f"{n} {item}" for item, n in o.inventory.items()) or "nothing"
        return f"step {o.steps}: {held}; layer {o.layer} ({o.layer_name}); {o.ticks} ticks; {o.held}/{self.goal.count} {self.goal.item}\n"

    # -- what the agent sees and does -------------------------------------------------------------
    def as_step(self, action: Any) -> Step:
        """An action as a Step: an index into :attr:`actions`, a Step, a BAR record or ``"craft 4 stick"``."""
        if isinstance(action, Step):
            return action
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            if not 0 <= int(action) < len(self.actions):
                raise ValueError(
                    f"action {int(action)} is out of range: indices go from 0 to {len(self.actions) - 1} (env.actions)"
                )
            return self.actions[int(action)]
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
            return self.as_step(int(action.reshape(())))
        if isinstance(action, str):
            from .bar_io import step_from_text

            try:
                return step_from_text(action)
            except ValueError as exc:
                raise ValueError(f"action {action!r}: {exc}; a string action is a step such as 'mine 4 logs'") from None
        if isinstance(action, Mapping):
            from .bar_io import step_from_record

            return step_from_record(dict(action), "action")
        raise ValueError(
            f"an action is an index into env.actions, a Step, a BAR record or a step such as "
            f"'mine 4 logs'; got {type(action).__name__}"
        )

    def _observe(self) -> dict:
        s = self._state.state
        inventory = np.zeros(len(self.items), dtype=np.int64)
        for item, n in s.inventory:
            if item in self._index:
                inventory[self._index[item]] = min(n, MAX_OBSERVED)
        box = lambda v: np.array([min(int(v), MAX_OBSERVED)], dtype=np.int64)  # noqa: E731
        return {
            "inventory": inventory,
            "layer": int(s.layer),
            "held": box(s.count(self.goal.item)),
            "ticks": box(self._state.ticks),
            "steps": box(self._state.steps),
        }

    def _info(
        self, ticks: int = 0, failure: WorldFailure | None = None, success: bool = False, action: Step | None = None
    ) -> dict:
        return {
            "ticks": ticks,
            "failure": failure,
            "failure_text": failure_text(failure),
            "success": success,
            "action": action,
            "observation": self.observation,
        }

    @property
    def observation(self) -> Observation:
        """The current observation as named Python values (the inventory as a name -> count mapping)."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        s = self._state
        names = self.kb.layers
        return Observation(
            MappingProxyType(dict(s.state.inventory)),
            s.state.layer,
            names[s.state.layer] if s.state.layer < len(names) else str(s.state.layer),
            s.ticks,
            s.time_left,
            self.goal,
            s.state.count(self.goal.item),
            s.steps,
        )

    @property
    def done(self) -> bool:
        return self._done

    def sample(self, rng: random.Random | None = None) -> Step:
        """A random action from :attr:`actions` as a Step (a random agent's policy; see also action_space)."""
        return (rng or random).choice(self.actions)


def failure_text(failure: WorldFailure | None) -> str:
    return "" if failure is None else f"{failure.code.value}: {failure.message}"


def register_envs() -> None:
    """Register ``barsym/Crafting-v0`` with gymnasium (done on import, and by gymnasium's plugin hook)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="barsym.env:CraftingEnv")


register_envs()
