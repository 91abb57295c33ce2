"""Plan a task and score it like BAR (:func:`plan_task`, the one way), over a task set, and explain every difference.

A score alone says *that* a plan differs from the expert's, not who is right:
the expert plans were written by people and some waste items or cannot run.
So for every task whose plan differs, the outcome records both validator
verdicts, the differing steps, and the raw resources each plan gathers, and
:func:`why` turns that into one sentence.

Per-task records carry the planner's ``stats`` as :meth:`PlanStats.to_dict`
writes them, so a planner that counts LLM calls, tokens or seconds reports
them here without changes. The tables printed of an evaluation are
:mod:`barsym.report.tables`'.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..kb import KnowledgeBase, Rules
from ..metrics import GroupScore, TaskScore, as_records, score_task
from ..model import Plan, StepType
from ..planner import PlanningError
from ..planner.result import PlanResult
from ..planner.stats import PlanStats
from ..validation import ValidationResult, Validator, Verdict
from .dataset import Task

ALL = "all"
#: groups in the order the paper's tables (and barsym's README) give them: BAR's tech tree, then DEPS's MT1..MT8
GROUP_ORDER = ("stone", "iron", "gold", "redstone", "diamond", *(f"MT{n}" for n in range(1, 9)))


def ordered_groups(names) -> list[str]:
    """Known groups in :data:`GROUP_ORDER`, any others after them in the order given."""
    names = list(dict.fromkeys(names))
    known = [g for g in GROUP_ORDER if g in names]
    return known + [g for g in names if g not in GROUP_ORDER]


@dataclass
class TaskOutcome:
    task: Task
    result: PlanResult | None = None
    error: PlanningError | None = None
    score: TaskScore | None = None
    expert: ValidationResult | None = None
    seconds: float = 0.0

    @property
    def plan(self) -> Plan | None:
        return self.result.plan if self.result else None

    @property
    def differs(self) -> bool:
        return self.score is not None and not self.score.exact

    def diff_lines(self) -> list[str]:
        """Differing steps, aligned: ``barsym X / expert Y``."""
        if self.plan is None or self.task.reference is None:
            return []
        ours = [show_step(r) for r in as_records(self.plan)]
        theirs = [show_step(r) for r in as_records(self.task.reference)]
        lines = []
        for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False).get_opcodes():
            if op == "equal":
                continue
            left = "; ".join(ours[a0:a1]) or "(nothing)"
            right = "; ".join(theirs[b0:b1]) or "(nothing)"
            lines.append(f"step {a0 + 1}: barsym {left} / expert {right}")
        return lines

    def to_dict(self) -> dict:
        out: dict = {
            "group": self.task.group,
            "goal": {"item": self.task.goal.item, "count": self.task.goal.count},
            "seconds": round(self.seconds, 6),
        }
        if self.task.reference is not None:  # the report's drill-down shows it beside the plan, from the run file alone
            out["expert_plan"] = as_records(self.task.reference)
        if self.error is not None:
            out.update(planned=False, error_kind=self.error.kind.value, error=self.error.message)
            return out
        assert self.result is not None
        out.update(
            planned=True,
            verdict=self.result.validation.verdict.value,
            steps=len(self.plan),
            plan=as_records(self.plan),
            stats=self.result.stats.to_dict(),
        )
        if self.score is not None:
            s = self.score
            out["accuracy"] = round(100.0 * s.accuracy[0] / s.accuracy[1], 2) if s.accuracy[1] else 0.0
            ph, pt, rh, rt = s.f1
            p, r = (ph / pt if pt else 0.0), (rh / rt if rt else 0.0)
            out["f1"] = round(200.0 * p * r / (p + r), 2) if p + r else 0.0
            out["edit_distance"] = s.edit_distance
            out["matches_expert"] = s.exact
        if self.expert is not None:
            out["expert_verdict"] = self.expert.verdict.value
        if self.differs:
            out["differences"] = self.diff_lines()
            out["why"] = why(self)
        return out


def show_step(record: dict) -> str:
    """A step as every command writes it: ``craft 9 planks``, ``mine 3 iron_ore with stone_pickaxe``."""
    from ..bar_io import PlanFormatError, step_from_record

    try:
        return str(step_from_record(record, "plan"))
    except PlanFormatError:  # not a step barsym reads: shown in the same word order
        tool = f" with {record['tool']}" if record.get("tool") else ""
        return f"{record.get('type')} {record.get('obj_num')} {record.get('obj_name')}{tool}"


def _gathered(plan: Plan) -> int:
    return sum(s.count or 0 for s in plan.steps if s.type in (StepType.MINE, StepType.KILL))


def _verdict_text(result: ValidationResult) -> str:
    if result.verdict is Verdict.INVALID:
        error = result.errors[0]
        where = f"step {error.step}" if error.step else "the end"
        return f"invalid at {where} ({error.message})"
    if result.verdict is Verdict.WASTEFUL:
        return "valid with waste (" + "; ".join(w.message for w in result.warnings) + ")"
    return "valid"


def why(outcome: TaskOutcome) -> str:
    """One sentence: which plan the validator prefers and what the difference costs."""
    ours, expert = outcome.result.validation, outcome.expert
    tail = (
        f"raw items gathered: barsym {_gathered(outcome.plan)}, expert {_gathered(outcome.task.reference)}; "
        f"steps: barsym {len(outcome.plan)}, expert {len(outcome.task.reference)}"
    )
    if expert is None:
        return tail
    if expert.verdict is Verdict.INVALID and ours.valid:
        return f"the expert plan is {_verdict_text(expert)}; barsym's plan is {ours.verdict.value}; {tail}"
    if expert.verdict is Verdict.WASTEFUL and ours.verdict is Verdict.VALID:
        return f"the expert plan is {_verdict_text(expert)}; barsym's plan is valid without waste; {tail}"
    if ours.verdict is expert.verdict:
        return f"both plans are {ours.verdict.value}: a different choice where the game allows several; {tail}"
    return f"barsym's plan is {_verdict_text(ours)}; the expert plan is {_verdict_text(expert)}; {tail}"


@dataclass
class Evaluation:
    planner: str
    outcomes: list[TaskOutcome] = field(default_factory=list)

    @property
    def has_references(self) -> bool:
        return any(o.task.reference is not None for o in self.outcomes)

    def groups(self) -> dict[str, GroupScore]:
        scores: dict[str, GroupScore] = {}
        for outcome in self.outcomes:
            if outcome.score is not None:
                scores.setdefault(outcome.task.group, GroupScore()).add(outcome.score, outcome.task.name)
        return scores

    def overall(self) -> GroupScore:
        total = GroupScore()
        for outcome in self.outcomes:
            if outcome.score is not None:
                total.add(outcome.score, outcome.task.key)
        return total

    def counts(self, group: str | None = None) -> dict[str, int]:
        chosen = [o for o in self.outcomes if group in (None, o.task.group)]
        return {
            "tasks": len(chosen),
            "planned": sum(o.result is not None for o in chosen),
            "valid": sum(o.result is not None and o.result.validation.verdict is Verdict.VALID for o in chosen),
            "unreachable": sum(o.error is not None and o.error.kind.about_goal for o in chosen),
            "failed": sum(o.error is not None and not o.error.kind.about_goal for o in chosen),
        }

    def group_names(self) -> list[str]:
        return ordered_groups(o.task.group for o in self.outcomes)

    def first_stats(self) -> PlanStats:
        """The first plan's statistics (what the planner ran, e.g. its LLM mode); empty when nothing was planned."""
        return next((o.result.stats for o in self.outcomes if o.result is not None), PlanStats())

    def unexecutable(self) -> int:
        """How many plans the validator says cannot run (only an unchecked planner such as llm-only writes any)."""
        return sum(o.result is not None and not o.result.validation.valid for o in self.outcomes)

    def backend_down(self) -> str | None:
        """Why the LLM backend failed during the run (the symbolic decomposer answered then), if it did."""
        return next(
            (o.result.stats.backend_down for o in self.outcomes if o.result and o.result.stats.backend_down), None
        )

    def to_dict(self) -> dict:
        groups = self.groups()
        out: dict = {"planner": self.planner, "groups": {}, "overall": {}, "tasks": {}}
        for name in self.group_names():
            entry = dict(self.counts(name))
            if name in groups:
                entry.update(groups[name].to_dict())
            out["groups"][name] = entry
        out["overall"] = dict(self.counts())
        if self.has_references:
            out["overall"].update(self.overall().to_dict())
        out["tasks"] = {o.task.key: o.to_dict() for o in self.outcomes}
        return out


def plan_task(task: Task, planner, validator: Validator) -> TaskOutcome:
    """Plan one task and score it: the one way barsym does it, for :func:`evaluate` and for every executor of
    ``barsym eval`` (:func:`~.spec.run_task`).

    The task is planned from its start inventory if it has one (Plancraft's), the time is the planner's alone,
    and the plan is scored against the expert plan (:func:`score_against_expert`).
    """
    outcome = TaskOutcome(task)
    started = time.perf_counter()
    try:
        outcome.result = planner.plan(task.goal, task.start) if task.start is not None else planner.plan(task.goal)
    except PlanningError as exc:
        outcome.error = exc
    outcome.seconds = time.perf_counter() - started
    score_against_expert(outcome, validator)
    return outcome


def score_against_expert(outcome: TaskOutcome, validator: Validator) -> None:
    """The expert plan's verdict and BAR's scores of the plan against it (a task without a plan scores as an empty
    plan; nothing for a task without an expert plan). A plan read back from a run file is scored here too."""
    task = outcome.task
    if task.reference is None:
        return
    outcome.expert = validator.validate(task.reference, goal=task.goal)
    outcome.score = score_task(outcome.result.plan if outcome.result is not None else [], task.reference)


def score_record(score: TaskScore) -> dict:
    """A score as a record keeps it (``score`` in a ``--run`` file's task line)."""
    return {
        "accuracy": list(score.accuracy),
        "f1": list(score.f1),
        "edit_distance": score.edit_distance,
        "longest": score.longest,
    }


def evaluate(
    tasks: Sequence[Task],
    planner,
    kb: KnowledgeBase,
    name: str = "",
    progress: Callable[[int, int, TaskOutcome], None] | None = None,
    rules: Rules | str | None = None,
) -> Evaluation:
    """Plan every task with ``planner`` (anything with ``plan(goal[, start])``) and score it, in this process.

    Each task goes through :func:`plan_task`, as every task of ``barsym eval`` does
    (:func:`~.scale.run_evaluation`); ``rules`` is the profile the expert plans are validated under.
    """
    validator = Validator(kb, rules)
    evaluation = Evaluation(name or getattr(planner, "name", "?"))
    for number, task in enumerate(tasks, start=1):
        outcome = plan_task(task, planner, validator)
        evaluation.outcomes.append(outcome)
        if progress is not None:
            progress(number, len(tasks), outcome)
    return evaluation
