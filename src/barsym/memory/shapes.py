"""The shape of a remembered plan, as pydantic models: what ``memory import`` accepts and what the store reads.

Why one set of models for both: an import that accepted what the reader
later chokes on (subgoals ``[1, 2]``, yields ``"lots"``, a step
``teleport``, a context ``{"at_hand": 5}``) let a bad line in and made
every later ``memory show`` and ``plan --memory`` a traceback. The step and
the subgoals are barsym's own :class:`~barsym.model.Step` and
:class:`~barsym.model.Goal`, the same models the memory decomposer turns a
remembered answer into; the numbers are strict (no ``"3"`` for 3, no
``true`` for 1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from ..model import MAX_COUNT, Goal, Step

__all__ = [
    "DecompositionRecord",
    "ExportedPlan",
    "RememberedContext",
    "RememberedDecomposition",
    "ValidationError",
    "as_export",
    "first_problem",
]


class RememberedContext(BaseModel):
    """What an answer depended on: items at hand and the deepest layer reached (``context_key``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at_hand: list[StrictStr] = Field(default_factory=list)
    layer: StrictInt = Field(default=0, ge=0, le=1000)


class RememberedDecomposition(BaseModel):
    """One decomposition row: a goal, its context, the step that makes it and the subgoals that step needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal_item: StrictStr = Field(min_length=1)
    goal_count: StrictInt = Field(ge=1, le=MAX_COUNT)
    context: RememberedContext
    step: Step
    subgoals: list[Goal]
    yields: StrictInt | None = Field(default=None, ge=0, le=MAX_COUNT)
    provenance: StrictStr


class ExportedPlan(BaseModel):
    """One line of ``memory export``: a plan with its decompositions and executions (world, seed, runs, successes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: StrictStr
    planner: StrictStr
    goal: tuple[StrictStr, StrictInt]
    steps: list[StrictStr]
    decompositions: list[RememberedDecomposition]
    executions: list[tuple[StrictStr, StrictInt, StrictInt, StrictInt]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _counts(self) -> "ExportedPlan":
        if not 1 <= self.goal[1] <= MAX_COUNT:
            raise ValueError(f"goal count must be from 1 to {MAX_COUNT}, got {self.goal[1]}")
        for world, seed, runs, successes in self.executions:
            if not 0 <= successes <= runs or not 0 <= seed < 2**64:
                raise ValueError(
                    f"execution in {world!r}: need 0 <= successes <= runs and a seed from 0 to "
                    f"2**64-1, got seed {seed}, {successes} of {runs} runs"
                )
        return self


def first_problem(exc: ValidationError) -> str:
    """The first error of a pydantic validation, as ``field.path: what`` on one line."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "record"
    return f"{where}: {' '.join(str(error.get('msg', 'invalid')).split())}"


@dataclass(frozen=True)
class DecompositionRecord:
    """What a recorder writes for one goal of a plan (JSON-ready fields)."""

    goal_item: str
    goal_count: int
    context: dict
    step: dict
    subgoals: list
    yields: int | None
    provenance: str

    @property
    def signature(self) -> str:
        """Same goal, same context, same answer: the unit whose success rate is pooled."""
        return json.dumps(
            [self.goal_item, self.goal_count, self.context, self.step, self.subgoals, self.yields],
            sort_keys=True,
            separators=(",", ":"),
        )


def parsed_export(record, number: int) -> tuple:
    """An exported record as ``_insert_plan`` arguments; ValueError saying which record and what is wrong.

    Checked with the models the store reads with (:mod:`.records`), so what is
    imported can always be shown and planned with.
    """
    try:
        plan = ExportedPlan.model_validate(record)
    except ValidationError as exc:
        raise ValueError(f"record {number}: not an exported memory record ({first_problem(exc)})") from None
    decs = [
        DecompositionRecord(
            d.goal_item,
            d.goal_count,
            d.context.model_dump(),
            d.step.model_dump(mode="json", exclude_none=True),
            [g.model_dump(mode="json") for g in d.subgoals],
            d.yields,
            d.provenance,
        )
        for d in plan.decompositions
    ]
    return plan.task, plan.planner, tuple(plan.goal), list(plan.steps), decs, [tuple(e) for e in plan.executions]


def canonical(record: dict) -> str:
    """One exported plan as text that is equal for equal plans: what makes an import idempotent."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def as_export(task, planner, goal, steps, decompositions, executions) -> dict:
    """What :meth:`export_plans` would write for these ``_insert_plan`` arguments."""
    decs = [
        {
            "goal_item": d.goal_item,
            "goal_count": d.goal_count,
            "context": d.context,
            "step": d.step,
            "subgoals": d.subgoals,
            "yields": d.yields,
            "provenance": d.provenance,
        }
        for d in decompositions
    ]
    return {
        "task": task,
        "planner": planner,
        "goal": [goal[0], goal[1]],
        "steps": steps,
        "decompositions": decs,
        "executions": [[w, int(s) & (2**64 - 1), r, k] for w, s, r, k in executions],
    }
