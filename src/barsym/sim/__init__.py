"""Simulator: immutable state, pure ``applicable``/``apply``, structured failures; execution worlds on top."""

from .execution import Episode, Execution, run, wilson_interval
from .failure import Code, Failure, StepFailed
from .rollout import Rollout, StepOutcome, StepUse, future_demand, goal_failure, rollout, step_uses
from .simulator import Simulator, Transition
from .state import State
from .stochastic import StochasticWorld
from .world import DeterministicWorld, StepResult, World, WorldCode, WorldFailure, WorldState

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
