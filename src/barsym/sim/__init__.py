"""Simulator: immutable state, pure ``applicable``/``apply``, structured failures."""

from .failure import Code, Failure, StepFailed
from .simulator import Simulator, Transition
from .state import State

__all__ = ["Code", "Failure", "Simulator", "State", "StepFailed", "Transition"]
