"""The stage memory's section of a plan's stats: goals it answered, passed on, refused as stale.

:class:`MemoryStats` is what :class:`~barsym.memory.decomposer.MemoryPlanner`
adds to ``PlanResult.stats``; it registers itself with
:func:`barsym.planner.stats.register_section` when this module is imported,
and is written flat beside the planner's counters (``memory_hits``,
``memory_misses``, ...), as it always was. Read it with
``result.stats.section(MemoryStats)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..planner.stats import register_section

__all__ = ["MemoryStats"]


@dataclass
class MemoryStats:
    """What the stage memory answered in one plan (written flat as ``memory_*``)."""

    hits: int = 0  # goals answered from memory
    misses: int = 0  # goals passed on to the wrapped decomposer
    stale: int = 0  # remembered answers refused by the verifier (and marked stale)
    spare: int = 0  # goals covered by spare units of the plan itself, passed on without asking the memory
    examples: int = 0  # goals passed on with remembered answers of close goals as few-shot examples

    @property
    def share(self) -> float:
        """The part of the goals asked that the memory answered."""
        asked = self.hits + self.misses
        return round(self.hits / asked, 4) if asked else 0.0

    def to_dict(self) -> dict:
        return {
            "memory_hits": self.hits,
            "memory_misses": self.misses,
            "memory_stale": self.stale,
            "memory_share": self.share,
            "memory_examples": self.examples,
            "memory_spare": self.spare,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "MemoryStats":
        return cls(
            **{
                name: data[f"memory_{name}"]
                for name in ("hits", "misses", "stale", "spare", "examples")
                if f"memory_{name}" in data
            }
        )

    def lines(self) -> list[str]:
        """Its line in a plan's text (``barsym plan``)."""
        shots = f", {self.examples} goal(s) given remembered examples of close goals" if self.examples else ""
        return [
            f"memory: {self.hits} goal(s) answered from memory, {self.misses} passed on "
            f"({100 * self.share:.0f} % from memory), {self.stale} refused as stale{shots}"
        ]


#: flat: its keys sit beside the planner's; its line comes before state consistency's, as it always did
register_section("memory", MemoryStats, order=40, flat=True)
