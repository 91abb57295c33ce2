"""Plans executed in a world, beside BAR's text metrics: ``barsym eval --world stochastic --runs N``.

BAR's stage memory scores decompositions by how often the plans that used
them succeed when executed; an evaluation with a world runs every plan a
planner wrote (and the expert plan beside it, for reference) and keeps each
task's runs (:class:`TaskExecution`) in its record. The rates per group are
:mod:`barsym.report.execution`'s.

Each task's runs are seeded from the ``--world-seed`` and the task's name, so
runs of different tasks are independent (the pooled interval assumes it),
while a task's plan and its expert plan meet the same worlds, which makes
their difference the plans' own (common random numbers).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ..sim.execution import Execution, run
from ..sim.stochastic import derive_seed
from ..sim.world import World
from .runner import Evaluation


@dataclass
class RunsSummary:
    """What the reports need of one plan's :class:`Execution`, and what a ``--run`` file keeps of it.

    A record must be plain JSON and small; the episodes themselves are not kept,
    only their count, the successes and the ticks of the successful runs.
    """

    runs: int
    successes: int
    success_ticks: list[int]
    detail: dict  # Execution.to_dict(): failures, ticks, a typical failure in words

    @classmethod
    def of(cls, execution: Execution) -> "RunsSummary":
        return cls(
            execution.runs, execution.successes, [e.ticks for e in execution.episodes if e.success], execution.to_dict()
        )

    def to_dict(self) -> dict:
        return {**self.detail, "success_ticks": list(self.success_ticks)}

    @classmethod
    def from_dict(cls, data: dict) -> "RunsSummary":
        detail = {k: v for k, v in data.items() if k != "success_ticks"}
        return cls(int(data["runs"]), int(data["successes"]), list(data.get("success_ticks") or []), detail)


@dataclass
class TaskExecution:
    planner: RunsSummary | None  # None: no plan
    expert: RunsSummary | None = None  # None: the task set has no expert plan

    def to_dict(self) -> dict:
        return {
            "planner": self.planner.to_dict() if self.planner else None,
            "expert": self.expert.to_dict() if self.expert else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TaskExecution":
        return cls(*(RunsSummary.from_dict(data[k]) if data.get(k) else None for k in ("planner", "expert")))


def task_seed(seed: int, key: str) -> int:
    """The seed of a task's runs: from the run seed and the task's name (``group/task``), in any process."""
    return derive_seed(seed, zlib.crc32(key.encode("utf-8")))


def execute_plans(task, plan, world: World, runs: int, seed: int = 0, budget: int | None = None) -> TaskExecution:
    """Run one task's plan (and its expert plan) ``runs`` times, seeded from the task's name."""
    seeded = task_seed(seed, task.key)

    def execute(chosen):
        return RunsSummary.of(run(chosen, world, runs, seeded, goal=task.goal, start=task.start, budget=budget))

    return TaskExecution(
        execute(plan) if plan is not None else None, execute(task.reference) if task.reference is not None else None
    )


_worlds: dict[tuple, World] = {}


def execute_task(kb, spec, task, plan) -> dict:
    """A worker's execution of one task under ``spec.world``, as the record keeps it."""
    from ..sim.stochastic import StochasticWorld
    from ..sim.world import DeterministicWorld

    key = (id(kb), spec.world.name, spec.rules)
    if key not in _worlds:
        kind = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}[spec.world.name]
        _worlds[key] = kind(kb, spec.rules)
    w = spec.world
    return execute_plans(task, plan, _worlds[key], w.runs, w.seed, w.budget).to_dict()


def execute_evaluation(
    evaluation: Evaluation, world: World, runs: int, seed: int = 0, budget: int | None = None
) -> dict[str, TaskExecution]:
    """Run every task's plan (and its expert plan) ``runs`` times; keyed like ``evaluation.to_dict()['tasks']``."""
    return {o.task.key: execute_plans(o.task, o.plan, world, runs, seed, budget) for o in evaluation.outcomes}
