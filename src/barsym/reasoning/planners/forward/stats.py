"""The forward planners' sections of a plan's stats: how DEPS', chain-of-thought's and the baselines' loops went.

:class:`DepsSummary` (``stats["deps"]``), :class:`CotSummary` (``stats["cot"]``) and
:class:`BaselineSummary` (``stats["baseline"]``) are what :mod:`.deps`, :mod:`.cot` and
:mod:`.baseline_loop` add to ``PlanResult.stats``; each registers itself with
:func:`barsym.planner.stats.register_section` when this module is imported (plain data,
kept apart from the loops so that a report reads them without loading a planner). Read
one with ``result.stats.section(DepsSummary)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ....planner.stats import known_fields, register_section

if TYPE_CHECKING:
    from .deps_trace import DepsTrace

__all__ = ["BaselineSummary", "CotSummary", "DepsSummary"]


@dataclass(frozen=True)
class DepsSummary:
    """DEPS' loop in ``stats["deps"]``: what ``barsym eval --json`` and the benches read per task."""

    rounds: int  # plans written and executed
    success_round: int | None
    stopped: str
    dropped_rounds: int  # most earlier rounds left out of one prompt
    world: str
    selector: str = "order"

    @classmethod
    def of(cls, trace: DepsTrace) -> "DepsSummary":
        """The summary of a :class:`~barsym.reasoning.planners.forward.deps_trace.DepsTrace`."""
        return cls(
            len(trace.rounds),
            trace.success_round,
            trace.stopped.value,
            max((r.dropped_rounds for r in trace.rounds), default=0),
            trace.world,
            trace.selector,
        )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "DepsSummary":
        # records of a version that kept fewer fields read back with these defaults
        values = {"rounds": 0, "success_round": None, "stopped": "unknown", "dropped_rounds": 0, "world": ""}
        return cls(**{**values, **known_fields(cls, data)})


@dataclass(frozen=True)
class CotSummary:
    """``stats["cot"]``: steps read, how many of the model's inventories were right, lines not read,
    steps folded because they repeated the step before them."""

    steps: int
    inventory_agreement: int
    unreadable_lines: int
    folded_repeats: int = 0

    def to_dict(self) -> dict:
        """``folded_repeats`` only when some were folded, so the stats of runs before the fold read back unchanged."""
        out = dataclasses.asdict(self)
        if not self.folded_repeats:
            del out["folded_repeats"]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "CotSummary":
        return cls(
            **{
                "steps": 0,
                "inventory_agreement": 0,
                "unreadable_lines": 0,
                "folded_repeats": 0,
                **known_fields(cls, data),
            }
        )


@dataclass(frozen=True)
class BaselineSummary:
    """``stats["baseline"]``: how the loop of reverse-chain, self-refine, tot or plan-and-solve ended.

    ``complete`` is whether the method reached a plan it considers finished (the chain or
    plan ended with ``done``, the feedback said correct, a kept branch ended); ``rounds`` is
    the method's own count (refinement rounds, tree depth, calls to write the plan).
    """

    method: str
    stopped: str
    complete: bool
    rounds: int = 0
    unreadable_lines: int = 0
    folded_repeats: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "BaselineSummary":
        return cls(**{"method": "", "stopped": "unknown", "complete": False, **known_fields(cls, data)})


# nested under their names, in this order (a plan has one of them; state consistency's comes after)
register_section("deps", DepsSummary, order=10)
register_section("cot", CotSummary, order=20)
register_section("baseline", BaselineSummary, order=30)
