"""Execution success per group, beside BAR's text metrics: the table of ``barsym eval --world stochastic --runs N``.

The runs themselves are :mod:`barsym.eval.execution`'s (one :class:`~barsym.eval.execution.TaskExecution`
per task); this is their report: the rate of every plan a planner wrote, pooled per group of the task set,
with the expert plans' rate beside it for reference. A task the planner gave no plan for counts as runs
that all failed: the planner left the agent with nothing to execute.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..eval.execution import TaskExecution
from ..eval.runner import ALL, Evaluation
from ..sim.execution import wilson_interval


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
