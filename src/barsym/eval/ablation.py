"""The paper's ablation of state consistency, and the cross-check of the model's scores.

Every task is planned once by the base planner (``llm-only``: the model's
backward decomposition, unchecked); each configuration of module (b) then
repairs that same plan. With greedy decoding the base plan is what ``bar-sc``
would start from anyway, and sharing it makes the rows differ only in the
module under test, at a fraction of the cost. A row's LLM calls and time per
task are the base planner's plus its own repair's.

The cross-check compares the model's step scores with the simulator's on the
base plans (:mod:`barsym.consistency.crosscheck`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..consistency import ConsistencyConfig, simulator_scores
from ..consistency.crosscheck import CrossCheck
from ..kb import KnowledgeBase
from ..metrics import GroupScore, score_task
from ..model import Plan
from ..planner import PlanningError
from .dataset import Task


@dataclass
class RowResult:
    label: str
    config: ConsistencyConfig | None
    score: GroupScore = field(default_factory=GroupScore)
    executable: int = 0
    tasks: int = 0
    llm_calls: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    repaired_steps: int = 0
    fallbacks: int = 0
    plans: dict[str, list[dict]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "config": self.config.describe() if self.config else "base planner",
            "tasks": self.tasks,
            "executable": self.executable,
            **self.score.to_dict(),
            "llm_calls_per_task": round(statistics.fmean(self.llm_calls), 2) if self.llm_calls else 0.0,
            "seconds_per_task": round(statistics.fmean(self.seconds), 3) if self.seconds else 0.0,
            "seconds_per_task_median": round(statistics.median(self.seconds), 3) if self.seconds else 0.0,
            "repaired_steps": self.repaired_steps,
            "symbolic_fallbacks": self.fallbacks,
        }


@dataclass
class Ablation:
    rows: list[RowResult]
    crosscheck: CrossCheck | None = None
    crosscheck_by_group: dict[str, CrossCheck] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict = {"rows": [r.to_dict() for r in self.rows]}
        if self.crosscheck is not None:
            out["crosscheck"] = {
                "all": self.crosscheck.to_dict(),
                **{g: c.to_dict() for g, c in self.crosscheck_by_group.items()},
            }
        out["plans"] = {r.label: r.plans for r in self.rows}
        return out


def run_ablation(
    tasks: Sequence[Task],
    base,
    kb: KnowledgeBase,
    rows: Sequence[tuple[str, ConsistencyConfig]],
    backend=None,
    scorer=None,
    progress: Callable[[str], None] | None = None,
    crosscheck_t: int = 5,
) -> Ablation:
    """Plan every task with ``base``, repair with each configuration, and score like BAR."""
    from ..reasoning import model_consistency

    engines = [model_consistency(kb, config, backend=backend, scorer=scorer) for _, config in rows]
    results = [RowResult("llm-only", None)] + [RowResult(label, config) for label, config in rows]
    check = CrossCheck(t=crosscheck_t) if scorer is not None else None
    by_group: dict[str, CrossCheck] = {}
    for number, task in enumerate(tasks, start=1):
        if progress:
            progress(f"task {number}/{len(tasks)} {task.key}")
        started = time.perf_counter()
        try:
            planned = base.plan(task.goal)
            plan, base_calls = planned.plan, planned.stats.model.llm_calls
        except PlanningError:
            plan, base_calls = Plan(steps=()), 0
        base_seconds = time.perf_counter() - started
        validator = engines[0].validator if engines else None
        _record(
            results[0],
            task,
            plan,
            validator.validate(plan, goal=task.goal).valid if validator and plan.steps else False,
            base_calls,
            base_seconds,
        )
        if check is not None and plan.steps:
            validation = validator.validate(plan, goal=task.goal)
            sim = [s.score for s in simulator_scores(validator, validation)]
            llm = scorer.score(plan.steps, task.goal)
            check.add(sim, llm)
            by_group.setdefault(task.group, CrossCheck(t=crosscheck_t)).add(sim, llm)
        for engine, row in zip(engines, results[1:]):
            if not plan.steps:
                _record(row, task, plan, False, base_calls, base_seconds)
                continue
            repaired = engine.repair(plan, goal=task.goal)
            row.repaired_steps += repaired.stats.repaired_steps
            row.fallbacks += repaired.stats.symbolic_fallbacks
            _record(
                row,
                task,
                repaired.plan,
                repaired.valid_after,
                base_calls + repaired.stats.llm_calls,
                base_seconds + repaired.seconds + repaired.stats.replayed_seconds,
            )
    return Ablation(results, check, by_group)


def _record(row: RowResult, task: Task, plan: Plan, valid: bool, calls: int, seconds: float) -> None:
    row.tasks += 1
    row.executable += bool(valid)
    row.llm_calls.append(calls)
    row.seconds.append(seconds)
    if task.reference is not None:
        row.score.add(score_task(plan, task.reference), task.key)
    row.plans[task.key] = [{"step": str(s)} for s in plan.steps]


def format_ablation(ablation: Ablation) -> str:
    lines = [f"{'configuration':<44} {'Acc':>6} {'F1':>6} {'ED':>6} {'exec':>6} {'calls':>7} {'s/task':>7}"]
    for row in ablation.rows:
        s = row.score
        calls = statistics.fmean(row.llm_calls) if row.llm_calls else 0.0
        seconds = statistics.fmean(row.seconds) if row.seconds else 0.0
        lines.append(
            f"{row.label:<44} {s.accuracy:>6.2f} {s.f1:>6.2f} {s.edit_distance:>6.2f} "
            f"{f'{row.executable}/{row.tasks}':>6} {calls:>7.1f} {seconds:>7.2f}"
        )
    return "\n".join(lines)


def format_crosscheck(ablation: Ablation) -> str:
    if ablation.crosscheck is None:
        return "cross-check: no model scores"
    lines = [
        f"{'plans':<10} {'steps':>5} {'Spearman':>9} {'per plan':>9} {'sim anch':>8} {'llm anch':>8} "
        f"{'both':>5} {'prec':>6} {'recall':>6}  model's scores"
    ]
    groups = {**ablation.crosscheck_by_group, "all": ablation.crosscheck}
    for name, check in groups.items():
        d = check.to_dict()

        def show(value):
            return "-" if value is None else f"{value:.3f}"

        dist = ", ".join(f"{k}: {v}" for k, v in d["llm_distribution"].items())
        lines.append(
            f"{name:<10} {d['steps']:>5} {show(d['spearman']):>9} {show(d['spearman_per_plan_mean']):>9} "
            f"{d['simulator_anchors']:>8} {d['llm_anchors']:>8} {d['both_anchors']:>5} "
            f"{show(d['precision']):>6} {show(d['recall']):>6}  {dist}"
        )
    return "\n".join(lines)
