"""What a state-consistency repair returns: the plan, each step's provenance, the rounds, and their JSON form.

:meth:`RepairResult.to_dict` / :meth:`RepairResult.from_dict` are what
``barsym repair --format json`` writes and what run files keep, so a result
read back says the same as the one written (rounds as summaries).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..model import Goal, Plan, Step
from ..validation import ValidationResult
from .anchors import AnchorPair
from .config import ConsistencyConfig
from .forward import KEPT, WindowRepair
from .scores import FailureKind, StepFault, StepScore
from .stats import RepairStats

__all__ = ["Provenance", "RepairResult", "RoundRecord"]


class Provenance(str, Enum):
    KEPT = KEPT
    REPAIRED_LLM = "repaired-llm"
    REPAIRED_SYMBOLIC = "repaired-symbolic"


@dataclass
class RoundRecord:
    number: int
    simulator: list[StepScore]
    llm: list[int | None] | None
    pairs: list[AnchorPair]
    windows: list[AnchorPair]
    repairs: list[WindowRepair] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "round": self.number,
            "anchors": [p.as_list() for p in self.pairs],
            "windows": [w.as_list() for w in self.windows],
            "repairs": [
                {
                    "window": r.window.pair.as_list(),
                    "repairer": r.repairer,
                    "done": r.done,
                    "steps": [str(s) for s in r.steps],
                    "dropped": [str(s) for s in r.dropped],
                    **({"note": r.note} if r.note else {}),
                }
                for r in self.repairs
            ],
        }


@dataclass
class RepairResult:
    original: Plan
    goal: Goal
    plan: Plan
    provenance: list[Provenance]
    before: ValidationResult
    after: ValidationResult
    rounds: list[RoundRecord]
    config: ConsistencyConfig
    seconds: float = 0.0
    stats: RepairStats = field(default_factory=RepairStats)
    initial: list[StepScore] = field(default_factory=list)  # the simulator's scores of the original plan
    #: the rounds as :meth:`RoundRecord.to_dict` wrote them, for a result read back by :meth:`from_dict`
    round_summaries: list[dict] | None = field(default=None, repr=False)
    #: the smallest repair, when one step did it (``delete step 4 (craft 1 clock)``): then there are no rounds
    edit: str | None = None

    def to_dict(self) -> dict:
        """Plain JSON data: both plans, goal, provenance, both verdicts in full, rounds, configuration, stats.

        The rounds are written as summaries (anchors, windows, each window's new steps); a result read
        back with :meth:`from_dict` has them in ``round_summaries`` and an empty ``rounds``.
        """
        c = self.config
        return {
            "goal": {"item": self.goal.item, "count": self.goal.count},
            "original": [s.model_dump(mode="json") for s in self.original.steps],
            "steps": [s.model_dump(mode="json") for s in self.plan.steps],
            "provenance": [p.value for p in self.provenance],
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds] if self.round_summaries is None else self.round_summaries,
            "edit": self.edit,
            "config": {
                "anchors": c.anchors.value,
                "scores": c.scores.value,
                "t": c.t,
                "k": c.k,
                "repairer": c.repairer.value,
                "fallback": c.fallback,
                "rounds": c.rounds,
                "seed": c.seed,
            },
            "seconds": self.seconds,
            "stats": self.stats.to_dict(),
            "initial": [
                {
                    "step": s.step,
                    "score": s.score,
                    "blamed": s.blamed,
                    "fault": None
                    if s.fault is None
                    else {
                        "step": s.fault.step,
                        "kind": s.fault.kind.value,
                        "code": s.fault.code,
                        "message": s.fault.message,
                    },
                }
                for s in self.initial
            ],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "RepairResult":
        """The result :meth:`to_dict` wrote (rounds as summaries: see there)."""

        def plan(records: list, source: str | None) -> Plan:
            return Plan(steps=tuple(Step.model_validate(r) for r in records), source=source)

        before, after = ValidationResult.from_dict(data["before"]), ValidationResult.from_dict(data["after"])
        initial = [
            StepScore(
                s["step"],
                s["score"],
                None
                if s["fault"] is None
                else StepFault(
                    s["fault"]["step"], FailureKind(s["fault"]["kind"]), s["fault"]["code"], s["fault"]["message"]
                ),
                s.get("blamed", False),
            )
            for s in data.get("initial", ())
        ]
        return cls(
            plan(data["original"], before.source),
            Goal(**data["goal"]),
            plan(data["steps"], after.source),
            [Provenance(p) for p in data["provenance"]],
            before,
            after,
            [],
            ConsistencyConfig(**data["config"]),
            data.get("seconds", 0.0),
            RepairStats.from_dict(data.get("stats", {})),
            initial,
            list(data.get("rounds", ())),
            data.get("edit"),
        )

    @property
    def valid_before(self) -> bool:
        return self.before.valid

    @property
    def valid_after(self) -> bool:
        return self.after.valid

    @property
    def changed(self) -> bool:
        return self.plan.steps != self.original.steps
