"""Evaluation: read a task set, run a planner on it, score it with BAR's metrics."""

from .dataset import DatasetError, Task, load_dataset, resolve_dataset
from .runner import Evaluation, TaskOutcome, evaluate, format_details, format_table, why

__all__ = [
    "DatasetError",
    "Evaluation",
    "Task",
    "TaskOutcome",
    "evaluate",
    "format_details",
    "format_table",
    "load_dataset",
    "resolve_dataset",
    "why",
]
