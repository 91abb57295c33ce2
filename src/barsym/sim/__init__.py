"""Simulator: immutable state, pure ``applicable``/``apply``, structured failures; execution worlds on top.

The state, the simulator and its rollout are imported here (every plan is checked by them; and
``rollout`` is both a module and a function, so it is bound here once, as the function). The execution
worlds (``execution``, ``stochastic``, ``world``) load on first use of their names
(:mod:`barsym.lazy_names`): a symbolic plan never needs them, ``barsym execute`` and DEPS do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names
from .failure import Code, Failure, StepFailed
from .rollout import Rollout, StepOutcome, StepUse, future_demand, goal_failure, rollout, step_uses
from .simulator import Simulator, Transition
from .state import State

if TYPE_CHECKING:
    from .execution import Episode, Execution, run, wilson_interval
    from .stochastic import StochasticWorld
    from .world import DeterministicWorld, StepResult, World, WorldCode, WorldFailure, WorldState

_LAZY = {
    **dict.fromkeys(("Episode", "Execution", "run", "wilson_interval"), "execution"),
    "StochasticWorld": "stochastic",
    **dict.fromkeys(("DeterministicWorld", "StepResult", "World", "WorldCode", "WorldFailure", "WorldState"), "world"),
}

__all__ = [
    "Code",
    "DeterministicWorld",
    "Episode",
    "Execution",
    "Failure",
    "Rollout",
    "Simulator",
    "State",
    "StepFailed",
    "StepOutcome",
    "StepResult",
    "StepUse",
    "StochasticWorld",
    "Transition",
    "World",
    "WorldCode",
    "WorldFailure",
    "WorldState",
    "future_demand",
    "goal_failure",
    "rollout",
    "run",
    "step_uses",
    "wilson_interval",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
