"""Plancraft's crafting tasks: barsym's verdicts and plans against the data set's labels.

Plancraft (Dagan, Keller, Lascarides 2024) labels each task possible or
impossible by a depth-first oracle that gives up after 30 s or 40 steps, so a
label can be wrong. For every task this report says whether barsym finds a
plan, whether that plan executes from the task's inventory under the
``crafting`` rules (the validator replays it), and how long it is in
Plancraft's unit against the oracle's path. For every disagreement it says who
is right: a plan that executes proves "possible"; an "impossible" of barsym's
is shown with its reason and the oracle's path, to be checked by hand.

Length is counted as Plancraft counts it: one action per crafting run (a
craft of 8 sticks is two runs) and one per smelted item.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..bar_io import step_to_record
from ..eval.runner import Evaluation, TaskOutcome
from ..kb import Rules
from ..model import StepType


def action_items(rules: Rules, result) -> list[str]:
    """The item of every craft run and smelted unit of a plan, in order, read off its rollout."""
    items: list[str] = []
    for index, step in enumerate(result.plan.steps):
        if step.type is StepType.SMELT:
            items += [step.item] * (step.count or 0)
        elif step.type is StepType.CRAFT:
            before = result.validation.trace[index]
            fit = rules.fitting_recipe(rules.kb.resolve(step.item or ""), step.count or 0, before.counts)
            items += [step.item] * (fit.batches if fit else 1)
        else:
            items.append(f"{step.type.value}:{step.item}")
    return items


def actions(rules: Rules, outcome: TaskOutcome) -> int | None:
    """Craft runs and smelted items of the plan (None without a plan)."""
    return None if outcome.result is None else len(action_items(rules, outcome.result))


@dataclass
class PlancraftRow:
    outcome: TaskOutcome
    possible: bool
    executes: bool
    length: int | None

    @property
    def task(self):
        return self.outcome.task

    @property
    def agrees(self) -> bool:
        return self.possible == self.task.label_possible

    @property
    def comparison(self) -> str | None:
        """shorter / equal / longer than the oracle's path, where both have one."""
        if self.length is None or self.task.optimal_length is None:
            return None
        return (
            "shorter"
            if self.length < self.task.optimal_length
            else "equal"
            if self.length == self.task.optimal_length
            else "longer"
        )

    def who_is_right(self) -> str:
        if self.agrees:
            return ""
        if self.possible and self.executes:
            return (
                f"label error: Plancraft says impossible, but barsym's plan executes from the inventory "
                f"({self.length} actions)"
            )
        if self.possible:
            return "barsym's plan does not execute: a bug in barsym"
        path = ", ".join(self.task.optimal_path) or "none given"
        reason = self.outcome.error.message if self.outcome.error else ""
        return f"barsym says impossible ({reason}); the oracle's path: {path}"


def rows(evaluation: Evaluation, rules: Rules) -> list[PlancraftRow]:
    out = []
    for outcome in evaluation.outcomes:
        result = outcome.result
        executes = result is not None and result.validation.valid
        out.append(PlancraftRow(outcome, result is not None, executes, actions(rules, outcome)))
    return out


def summary(table: list[PlancraftRow]) -> dict:
    labelled = [r for r in table if r.task.label_possible is not None]
    planned = [r for r in table if r.possible]
    compared = [r.comparison for r in table if r.comparison is not None]
    seconds = [r.outcome.seconds for r in table]
    return {
        "tasks": len(table),
        "possible": len(planned),
        "label_possible": sum(bool(r.task.label_possible) for r in labelled),
        "agreement": sum(r.agrees for r in labelled),
        "agreement_rate": round(sum(r.agrees for r in labelled) / len(labelled), 6) if labelled else None,
        "disagreements": [r.task.name for r in labelled if not r.agrees],
        "executes": sum(r.executes for r in planned),
        "executes_rate": round(sum(r.executes for r in planned) / len(planned), 6) if planned else None,
        "length": {kind: compared.count(kind) for kind in ("shorter", "equal", "longer")},
        "length_at_most_optimal_rate": round((compared.count("shorter") + compared.count("equal")) / len(compared), 6)
        if compared
        else None,
        "planning_seconds": round(sum(seconds), 6),
        "seconds_per_task": {
            "median": round(statistics.median(seconds), 6) if seconds else 0.0,
            "max": round(max(seconds), 6) if seconds else 0.0,
        },
    }


def to_dict(table: list[PlancraftRow], planner: str) -> dict:
    tasks = {}
    for r in table:
        entry = {
            "target": r.task.goal.item,
            "possible": r.possible,
            "label_possible": r.task.label_possible,
            "steps": [step_to_record(s) for s in r.outcome.result.plan.steps] if r.outcome.result else [],
            "reason": r.outcome.error.message if r.outcome.error else None,
            "executes": r.executes,
            "actions": r.length,
            "optimal_length": r.task.optimal_length,
            "group": r.task.group,
            "seconds": round(r.outcome.seconds, 6),
        }
        if not r.agrees:
            entry["who_is_right"] = r.who_is_right()
        tasks[r.task.name] = entry
    return {"planner": planner, "rules": "crafting", "tasks": tasks, "summary": summary(table)}


def format_report(table: list[PlancraftRow]) -> str:
    s = summary(table)
    lines = [
        f"{'group':<11} {'tasks':>5} {'possible':>9} {'label':>6} {'agree':>6} {'executes':>9} "
        f"{'shorter':>8} {'equal':>6} {'longer':>7}"
    ]
    groups = list(dict.fromkeys(r.task.group for r in table))
    for group in groups + ["all"]:
        chosen = [r for r in table if group in ("all", r.task.group)]
        g = summary(chosen)
        lines.append(
            f"{group:<11} {g['tasks']:>5} {g['possible']:>9} {g['label_possible']:>6} {g['agreement']:>6} "
            f"{g['executes']:>9} {g['length']['shorter']:>8} {g['length']['equal']:>6} "
            f"{g['length']['longer']:>7}"
        )
    rate = s["agreement_rate"]
    lines += [
        "",
        f"verdict agreement with Plancraft's labels: {s['agreement']}/{s['tasks']}"
        + (f" ({100 * rate:.2f} %)" if rate is not None else ""),
        f"plans that execute from the task inventory: {s['executes']}/{s['possible']}"
        + (f" ({100 * s['executes_rate']:.2f} %)" if s["executes_rate"] is not None else ""),
        f"length against the oracle's path (actions): {s['length']['shorter']} shorter, {s['length']['equal']} equal, "
        f"{s['length']['longer']} longer"
        + (
            f" ({100 * s['length_at_most_optimal_rate']:.2f} % at most optimal)"
            if s["length_at_most_optimal_rate"] is not None
            else ""
        ),
        f"planning time: {s['planning_seconds']:.3f} s in all; per task median "
        f"{1000 * s['seconds_per_task']['median']:.3f} ms, max {1000 * s['seconds_per_task']['max']:.1f} ms",
    ]
    for r in table:
        if not r.agrees:
            lines.append(f"{r.task.name} ({r.task.goal.item}): {r.who_is_right()}")
    return "\n".join(lines)
