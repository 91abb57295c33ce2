"""Simulator: immutable state, pure ``applicable``/``apply``, structured failures."""

from .failure import Code, Failure, StepFailed
from .goal import goal_failure
from .rollout import Rollout, StepOutcome, future_demand, rollout
from .simulator import Simulator, Transition
from .state import State

__all__ = ["Code", "Failure", "Rollout", "Simulator", "State", "StepFailed", "StepOutcome", "Transition",
           "future_demand", "goal_failure", "rollout"]
