"""What a validation says: the verdict, each finding (a step, an error code, what was missing) and the result a
plan file's record, ``barsym validate``'s summary line and every planner's ``PlanResult.validation`` read.

Split from :mod:`barsym.validation` (the validator, which plays a plan forward) along that seam: the result
types are read far more widely than the validator is run (run files, reports, the API), and need none of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from .kb import Rules
from .model import Goal, Plan
from .sim import Rollout, State, StepUse, step_uses
from .steps import clip


class Verdict(str, Enum):
    VALID = "valid"
    WASTEFUL = "valid with waste"
    INVALID = "invalid"


@dataclass(frozen=True)
class Finding:
    """An error or warning about one step (``step`` is 1-based; None = the plan)."""

    step: int | None
    code: str
    message: str
    item: str | None = None
    needed: float | int | None = None
    had: float | int | None = None
    count: int | None = None
    suggestions: tuple[str, ...] = ()
    caused_by: int | None = None  # an earlier failed step that would have provided what is missing

    def to_dict(self) -> dict:
        out = {"step": self.step, "code": self.code, "message": self.message}
        for key in ("item", "needed", "had", "count", "caused_by"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.suggestions:
            out["suggestions"] = list(self.suggestions)
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "Finding":
        """The finding :meth:`to_dict` wrote."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["suggestions"] = tuple(values.get("suggestions", ()))
        return cls(**values)


@dataclass
class ValidationResult:
    source: str | None
    goal: Goal | None
    verdict: Verdict
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    trace: list[State] = field(default_factory=list)  # trace[0] is the start; trace[i] follows step i
    failed_step: int | None = None  # the first failing step
    rollout: Rollout | None = None
    rules: Rules | None = field(default=None, repr=False, compare=False)  # what the plan was played under

    @property
    def valid(self) -> bool:
        return self.verdict is not Verdict.INVALID

    @property
    def state_before_failure(self) -> State | None:
        return self.trace[self.failed_step - 1] if self.failed_step else None

    def state_before(self, step: int) -> State:
        """The state step ``step`` (1-based) was played from."""
        return self.trace[step - 1]

    @property
    def failed_steps(self) -> list[int]:
        return sorted({e.step for e in self.errors if e.step})

    @property
    def final_state(self) -> State:
        return self.trace[-1]

    def uses(self) -> list[StepUse | None]:
        """Per step, its recipe and what it consumed and made, as played (:func:`barsym.sim.step_uses`; None for a
        step that failed); a result read back from JSON (no rollout) has none."""
        if self.rollout is None or self.rules is None:
            return []
        return step_uses(self.rules, self.rollout)

    def failure(self) -> str | None:
        """Where and why the plan first fails, in words (``fails at step 3: ...``); None for a plan that runs."""
        if self.valid:
            return None
        error = self.errors[0]
        return f"fails at {f'step {error.step}' if error.step else 'the end'}: {error.message}"

    def to_text(self, plan: Plan, layers: tuple[str, ...] = (), quiet: bool = False) -> str:
        """The verdict as ``barsym validate`` prints it: a line, then each root error with the state before it,
        the knock-on failures in one line, the warnings; ``quiet``: nothing for a plainly valid plan."""
        goal = f"goal {self.goal.count} {clip(self.goal.item)}" if self.goal else "no goal"
        if self.verdict is Verdict.VALID and not self.warnings:
            return "" if quiet else f"{self.source}: valid ({len(plan)} steps, {goal})\n"
        if self.verdict is Verdict.VALID:  # valid, with a tool that wears out: the warning is shown, not dropped
            lines = [f"{self.source}: valid ({len(plan)} steps, {goal})"]
        elif self.verdict is Verdict.WASTEFUL:
            lines = [f"{self.source}: valid with waste ({len(plan)} steps, {goal})"]
        else:
            where = f"step {self.failed_step}" if self.failed_step else "the end"
            lines = [f"{self.source}: INVALID at {where} ({len(plan)} steps, {goal})"]
        knock_on = [e for e in self.errors if e.caused_by is not None]
        roots = [e for e in self.errors if e.caused_by is None]
        for n, error in enumerate(roots):  # a step that fails for several reasons is named once, each reason under it
            first = n == 0 or roots[n - 1].step != error.step
            if error.step and first:
                lines.append(f"  step {error.step}: {plan.steps[error.step - 1]}")
            lines.append(f"    error [{error.code}] {error.message}")
            if n + 1 == len(roots) or roots[n + 1].step != error.step or not error.step:
                before = self.state_before(error.step) if error.step else self.final_state
                lines.append(f"    {'state before' if error.step else 'final state'}: {before.describe(layers)}")
        if knock_on:
            steps = ", ".join(str(e.step) for e in knock_on[:8]) + (", ..." if len(knock_on) > 8 else "")
            cause_of = {e.step: e.caused_by for e in self.errors}
            origins: set[int] = set()
            for e in knock_on:
                root = e.caused_by
                while cause_of.get(root) is not None:
                    root = cause_of[root]
                origins.add(root or 0)
            causes = ", ".join(str(c) for c in sorted(origins))
            lines.append(
                f"  {len(knock_on)} later step(s) also fail (steps {steps}): knock-on failures of step(s) {causes}, "
                "which made nothing"
            )
        for warning in self.warnings:
            lines.append(
                f"  {f'step {warning.step}' if warning.step else 'plan'}: warning [{warning.code}] {warning.message}"
            )
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        out = {
            "file": self.source,
            "goal": None if self.goal is None else {"item": self.goal.item, "count": self.goal.count},
            "valid": self.valid,
            "verdict": self.verdict.value,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
            "steps_run": (self.failed_step - 1) if self.failed_step else len(self.trace) - 1,
            "failed_steps": self.failed_steps,
        }
        before = self.state_before_failure
        if before is not None:
            out["state_before_failure"] = before.to_dict()
        out["final_state"] = self.final_state.to_dict()
        out["failed_step"] = self.failed_step
        out["trace"] = [s.to_dict() for s in self.trace]  # the start, then the state after each step
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "ValidationResult":
        """The result :meth:`to_dict` wrote (``barsym validate --json`` prints one per plan).

        Everything :meth:`to_dict` writes comes back; the rollout (the simulator's
        own record of every transition) is not written, and is None here.
        """
        goal = data.get("goal")
        return cls(
            data.get("file"),
            None if goal is None else Goal(**goal),
            Verdict(data["verdict"]),
            errors=[Finding.from_dict(e) for e in data.get("errors", ())],
            warnings=[Finding.from_dict(w) for w in data.get("warnings", ())],
            trace=[State.from_dict(s) for s in data.get("trace", ())],
            failed_step=data.get("failed_step"),
        )


def unusable_record(name: str, message: str) -> dict:
    """A plan file that cannot be read, as a record of the shape of :meth:`ValidationResult.to_dict`'s."""
    error = {"step": None, "code": "bad_input", "message": message}
    return {"file": name, "valid": False, "verdict": "unusable input", "errors": [error], "warnings": []}


def summary_line(verdicts: list[Verdict], unusable: int = 0) -> str:
    """``summary: 3 plan(s): 1 valid, 1 valid with waste, 1 invalid, 1 unusable`` (the unusable counted in)."""
    extra = f", {unusable} unusable" if unusable else ""
    valid, wasteful, invalid = (verdicts.count(v) for v in (Verdict.VALID, Verdict.WASTEFUL, Verdict.INVALID))
    return (
        f"summary: {len(verdicts) + unusable} plan(s): {valid} valid, {wasteful} valid with waste, "
        f"{invalid} invalid{extra}"
    )
