"""Execution success per group, beside BAR's text metrics: ``barsym eval --world stochastic --runs N``.

BAR's stage memory scores decompositions by how often the plans that used
them succeed when executed; this report gives that rate for every plan a
planner wrote, pooled per group of the task set, with the expert plans' rate
beside it for reference. A task the planner gave no plan for counts as runs
that all failed: the planner left the agent with nothing to execute.

Each task's runs are seeded from the ``--world-seed`` and the task's name, so
runs of different tasks are independent (the pooled interval assumes it),
while a task's plan and its expert plan meet the same worlds, which makes
their difference the plans' own (common random numbers).
"""

from __future__ import annotations

import statistics
import zlib
from dataclasses import dataclass, field

from ..sim.execution import Execution, run, wilson_interval
from ..sim.stochastic import derive_seed
from ..sim.world import World
from .runner import ALL, Evaluation


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


@dataclass
class GroupExecution:
    name: str
    tasks: int = 0
    runs: int = 0
    successes: int = 0
    ticks: list[int] = field(default_factory=list)  # ticks of every successful run
    expert_runs: int = 0
    expert_successes: int = 0
    expert_ticks: list[int] = field(default_factory=list)

    def add(self, task: TaskExecution, runs: int) -> None:
        self.tasks += 1
        self.runs += runs
        if task.planner is not None:
            self.successes += task.planner.successes
            self.ticks += task.planner.success_ticks
        if task.expert is not None:
            self.expert_runs += task.expert.runs
            self.expert_successes += task.expert.successes
            self.expert_ticks += task.expert.success_ticks

    @property
    def rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    def to_dict(self) -> dict:
        low, high = wilson_interval(self.successes, self.runs)
        out = {
            "tasks": self.tasks,
            "runs": self.runs,
            "successes": self.successes,
            "success_rate": round(self.rate, 6),
            "interval": [round(low, 6), round(high, 6)],
            "median_ticks": statistics.median(self.ticks) if self.ticks else None,
        }
        if self.expert_runs:
            out["expert_success_rate"] = round(self.expert_successes / self.expert_runs, 6)
            out["expert_median_ticks"] = statistics.median(self.expert_ticks) if self.expert_ticks else None
        return out


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


def group_executions(evaluation: Evaluation, executions: dict[str, TaskExecution], runs: int) -> list[GroupExecution]:
    """One row per group in the task set's order, then ``all``."""
    groups = {name: GroupExecution(name) for name in evaluation.group_names()}
    total = GroupExecution(ALL)
    for outcome in evaluation.outcomes:
        task = executions[outcome.task.key]
        groups[outcome.task.group].add(task, runs)
        total.add(task, runs)
    return list(groups.values()) + [total]


def execution_record(rows: list[GroupExecution], executions: dict[str, TaskExecution], world, runs, seed) -> dict:
    """The execution report as plain data (``barsym eval --world``'s ``execution``): the rows and every task's runs."""
    return {
        "world": world,
        "runs": runs,
        "seed": seed,
        "groups": {row.name: row.to_dict() for row in rows},
        "tasks": {key: t.to_dict() for key, t in executions.items()},
    }


def format_execution(rows: list[GroupExecution], world: str, runs: int, seed: int) -> str:
    expert = any(r.expert_runs for r in rows)
    lines = [
        f"execution in the {world} world ({runs} runs per plan, seed {seed})",
        f"{'group':<10} {'tasks':>5} {'success':>8} {'95 % interval':>15} {'median ticks':>13}"
        + (f" {'expert':>8} {'its ticks':>10}" if expert else ""),
    ]
    for row in rows:
        low, high = wilson_interval(row.successes, row.runs)
        median = f"{statistics.median(row.ticks):,.0f}" if row.ticks else "-"
        interval = f"{100 * low:.1f}-{100 * high:.1f} %"
        line = f"{row.name:<10} {row.tasks:>5} {100 * row.rate:>7.1f}% {interval:>15} {median:>13}"
        if expert:
            rate = row.expert_successes / row.expert_runs if row.expert_runs else 0.0
            ticks = f"{statistics.median(row.expert_ticks):,.0f}" if row.expert_ticks else "-"
            line += f" {100 * rate:>7.1f}% {ticks:>10}"
        lines.append(line)
    return "\n".join(lines)
