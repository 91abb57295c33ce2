"""DEPS' record of one plan: its rounds (plan, execution, description, explanation) and why the loop stopped.

Kept apart from the loop (:mod:`.deps`) because it is what leaves the planner:
``barsym plan`` prints :meth:`DepsTrace.lines`, ``--format json`` and the run files
write :meth:`DepsTrace.to_dict`, and the ablation reads :meth:`DepsTrace.plan_after`.
Every way the loop can end is a :class:`StopReason`, and the trace says it with
the detail (``problem``): the backend's error, the step the model repeated, the
round a plan repeated, the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ....bar_io import step_to_record
from ....model import Step

__all__ = ["DepsRound", "DepsTrace", "StopReason"]


class StopReason(str, Enum):
    SUCCEEDED = "succeeded"  # an episode reached the goal
    ROUNDS_USED = "rounds_used"  # every round was planned and failed
    CONTEXT_FULL = "context_full"  # not even the latest round fits the model's context
    BACKEND_DOWN = "backend_down"  # the model stopped answering
    REPEATED_STEP = "repeated_step"  # the model wrote one step again and again: at temperature 0 it would again
    NO_CHANGE = "no_change"  # a replanned plan is an earlier round's: it would run the same way
    DEADLINE = "deadline"  # the plan's time is up (--deadline)


@dataclass
class DepsRound:
    """One plan, its execution, and (after a failure) the model's explanation."""

    number: int
    steps: tuple[Step, ...]
    success: bool
    ticks: int
    description: str | None = None
    explanation: str | None = None
    unreadable: tuple[str, ...] = ()  # reply lines that were not steps
    dropped_rounds: int = 0  # earlier rounds left out of this round's prompt (context)
    order: tuple[int, ...] | None = None  # plan positions as a selector ran them; None: as written
    folded: int = 0  # steps dropped because they repeated the step before (forward_plans.fold_repeats)
    past_goal: int = 0  # lines written after the step that makes the goal, not read (forward_plans.parse_plan_text)

    def to_dict(self) -> dict:
        out = {
            "round": self.number,
            "plan": [step_to_record(s) for s in self.steps],
            "success": self.success,
            "ticks": self.ticks,
            "description": self.description,
            "explanation": self.explanation,
            "unreadable_lines": list(self.unreadable),
            "dropped_rounds": self.dropped_rounds,
        }
        if self.order is not None:
            out["order"] = [i + 1 for i in self.order]
        if self.folded:
            out["folded_repeats"] = self.folded
        if self.past_goal:
            out["past_goal"] = self.past_goal
        return out

    @property
    def reordered(self) -> bool:
        return self.order is not None and list(self.order) != sorted(self.order)


@dataclass
class DepsTrace:
    world: str
    max_rounds: int
    rounds: list[DepsRound] = field(default_factory=list)
    stopped: StopReason = StopReason.ROUNDS_USED
    problem: str | None = None  # the backend's last error, when it stopped the loop
    selector: str = "order"  # who picks among steps that can run at once (planner.selector.SELECTORS)
    reasoning: tuple[str, ...] = ()  # round 0's backward reasoning before its plan, without facts (cot_needs)

    @property
    def success_round(self) -> int | None:
        return next((r.number for r in self.rounds if r.success), None)

    def plan_after(self, number: int) -> tuple[Step, ...] | None:
        """The plan DEPS would return had it been allowed ``number`` replanning rounds (the ablation)."""
        kept = [r for r in self.rounds if r.number <= number]
        return kept[-1].steps if kept else None

    def to_dict(self) -> dict:
        out = {
            "world": self.world,
            "max_rounds": self.max_rounds,
            "stopped": self.stopped.value,
            "success_round": self.success_round,
            "problem": self.problem,
            "rounds": [r.to_dict() for r in self.rounds],
        }
        if self.selector != "order":  # the plan as written: the trace is what it was before selectors
            out["selector"] = self.selector
        if self.reasoning:
            out["reasoning"] = list(self.reasoning)
        return out

    def lines(self) -> list[str]:
        picked = f", ready steps picked by the {self.selector} selector" if self.selector != "order" else ""
        out = [
            f"DEPS: {len(self.rounds)} plan(s) executed in the {self.world} world{picked}, at most "
            f"{self.max_rounds} replanning round(s); stopped: {self.stopped.value.replace('_', ' ')}"
            + (f" ({self.problem})" if self.problem else "")
        ]
        if self.reasoning:
            out.append(f"  round 0 reasoned backward first ({len(self.reasoning)} line(s)):")
            out += [f"    {line}" for line in self.reasoning]
        for r in self.rounds:
            cut = f", {r.dropped_rounds} earlier round(s) left out of the prompt" if r.dropped_rounds else ""
            bad = f", {len(r.unreadable)} unreadable line(s)" if r.unreadable else ""
            bad += f", {r.folded} repeated line(s) folded" if r.folded else ""
            bad += f", {r.past_goal} line(s) after the goal's step not read" if r.past_goal else ""
            verdict = f"succeeded in {r.ticks:,} ticks" if r.success else "failed"
            ran = f", run as steps {', '.join(str(i + 1) for i in r.order)}" if r.reordered else ""
            out.append(f"  round {r.number}: {len(r.steps)} steps{bad}{cut}{ran}; {verdict}")
            if r.description:
                out.append(f"    description: {r.description}")
            if r.explanation:
                out.append(f"    explanation: {r.explanation}")
        return out
