"""Evaluation, the running half: read a task set, run a planner on it (in any executor, resumably), score it with
BAR's metrics, and keep the records in a run file. What is printed and drawn of a run is :mod:`barsym.report`'s."""

from .dataset import DatasetError, Task, load_dataset, resolve_dataset
from .runner import Evaluation, TaskOutcome, evaluate, plan_task, why

__all__ = [
    "DatasetError",
    "Evaluation",
    "Task",
    "TaskOutcome",
    "evaluate",
    "load_dataset",
    "plan_task",
    "resolve_dataset",
    "why",
]
