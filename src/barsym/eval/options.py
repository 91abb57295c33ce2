"""Which tasks of a data set an evaluation runs, and where, as one model.

``barsym eval``'s ``--dataset``, ``--tasks/--groups/--limit`` and ``--workers/--executor/--ray-address/--run`` are
generated from these fields (:mod:`barsym.commands.options`), so each range and each rule between
them (``--ray-address`` only with Ray) is stated here once, and a script that calls
:func:`~.scale.run_evaluation` itself gets the same checks from the same model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..datasets import names as dataset_names
from ..kb import KnowledgeBase
from .dataset import Task, load_dataset, resolve_dataset
from .scale import select_tasks
from .workers import Executor

MAX_WORKERS = 256
MAX_REPEATS = 100


class RunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(
        description=f"a bundled task set ({', '.join(dataset_names())}; see barsym datasets), a BAR "
        "tech-tree folder (tasks.json + GROUP/TASK.jsonl) or a task-list JSON file",
        json_schema_extra={"metavar": "NAME|PATH"},
    )
    tasks: list[str] | None = Field(
        None, description="only these tasks (name or group/name)", json_schema_extra={"metavar": "NAME,..."}
    )
    groups: list[str] | None = Field(
        None, description="only the tasks of these groups", json_schema_extra={"metavar": "G,..."}
    )
    limit: int | None = Field(
        None, ge=1, description="only the first N of the chosen tasks", json_schema_extra={"metavar": "N"}
    )
    workers: int = Field(
        1,
        ge=1,
        le=MAX_WORKERS,
        description="processes planning at once, each with its own model on cores/N threads",
        json_schema_extra={"metavar": "N"},
    )
    executor: Executor = Field(
        Executor.LOCAL,
        description="local: this machine's processes (default); ray: Ray tasks (pip install 'barsym[ray]')",
        json_schema_extra={"metavar": "NAME"},
    )
    ray_address: str | None = Field(
        None,
        description="a running Ray cluster (default: start a local one with --workers CPUs)",
        json_schema_extra={"metavar": "ADDR"},
    )
    repeats: int = Field(
        1,
        ge=1,
        le=MAX_REPEATS,
        description="run every task N times, the model's seed --llm-seed, +1, ... (BAR's protocol: 10); "
        "the tables add each group's mean and spread over the runs",
        json_schema_extra={"metavar": "N"},
    )
    run_file: Path | None = Field(
        None,
        description="keep each finished task in FILE (one JSON line, flushed; FILE.jsonl.gz keeps it compressed); "
        "run again to skip them",
        json_schema_extra={"flag": "--run", "metavar": "FILE.jsonl"},
    )

    @field_validator("tasks", "groups", mode="before")
    @classmethod
    def _comma_separated(cls, value):
        """``a,b`` as typed on the command line is the names a and b (blanks dropped)."""
        return [n.strip() for n in value.split(",") if n.strip()] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> RunOptions:
        for name in ("tasks", "groups"):
            if getattr(self, name) == []:
                raise ValueError(f"--{name} needs at least one name")
        if self.ray_address is not None and self.executor is not Executor.RAY:
            raise ValueError("--ray-address needs --executor ray")
        return self

    @property
    def parallel(self) -> bool:
        """Tasks run in other processes (a pool or Ray), each with its own planner built from the spec."""
        return self.workers > 1 or self.executor is Executor.RAY

    def threads_per_worker(self) -> int:
        """Each worker's share of the cores, so that a pool does not oversubscribe them."""
        return max(1, (os.cpu_count() or 1) // self.workers)

    def choose(self, tasks: Sequence[Task]) -> list[Task]:
        return select_tasks(tasks, self.tasks or (), self.groups or (), self.limit)

    def load(self, kb: KnowledgeBase, dialect: str | None = None) -> tuple[Path, str | None, list[Task]]:
        """The data set's files, its name dialect (``dialect``, else the one a bundled set names) and the chosen
        tasks; a DatasetError says what is wrong with the data set or the choice."""
        path, implied = resolve_dataset(self.dataset)
        dialect = dialect or implied
        return path, dialect, self.choose(load_dataset(path, kb, dialect=dialect))
