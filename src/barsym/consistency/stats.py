"""State consistency's section of a plan's stats: rounds, windows, steps repaired, the model's calls.

:class:`RepairStats` is what a repair counts (:class:`~barsym.consistency.results.RepairResult`'s
``stats``) and what ``bar-sc`` and ``--consistency`` add to ``PlanResult.stats``
(``stats["consistency"]`` in the JSON); it registers itself with
:func:`barsym.planner.stats.register_section` when this module is imported. Read it
with ``result.stats.section(RepairStats)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..planner.stats import known_fields, register_section

__all__ = ["RepairStats"]


@dataclass
class RepairStats:
    """State consistency's counters for one repair (``stats["consistency"]`` in the JSON).

    The ``scoring_*``/``repair_*``/``needs_*`` counters are None when that part (the model's
    step scorer, the LLM repairer, the model planning needs) was not configured, and are then not written.
    """

    rounds: int = 0
    windows: int = 0
    repaired_steps: int = 0
    kept_steps: int = 0
    unfinished_windows: int = 0
    symbolic_fallbacks: int = 0
    valid_before: bool = True
    valid_after: bool = True
    seconds: float = 0.0
    scoring_llm_calls: int | None = None
    scoring_forced: int | None = None
    repair_llm_calls: int | None = None
    repair_forced: int | None = None
    needs_llm_calls: int | None = None  # --repair-needs model: the model's calls planning what windows miss
    needs_forced: int | None = None
    llm_calls: int = 0  # scoring, repair and planning needs together, replayed scores included
    evaluated_prompt_tokens: int = 0
    replayed_seconds: float = 0.0  # time the replayed calls took when first made
    step_scores: dict | None = None  # the first round's scores from both scorers, where the model scored

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        for name in (
            "scoring_llm_calls",
            "scoring_forced",
            "repair_llm_calls",
            "repair_forced",
            "needs_llm_calls",
            "needs_forced",
            "step_scores",
        ):
            if out[name] is None:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "RepairStats":
        return cls(**known_fields(cls, data))

    def lines(self) -> list[str]:
        """Its line in a plan's text (``barsym plan``): what state consistency (bar-sc, --consistency) did."""
        if self.valid_before:
            return ["state consistency: the plan was valid; nothing to repair"]
        return [
            f"state consistency: invalid -> {'valid' if self.valid_after else 'invalid'} in {self.rounds} round(s), "
            f"{self.windows} window(s), {self.repaired_steps} step(s) repaired, {self.kept_steps} kept; "
            f"LLM calls: {self.scoring_llm_calls or 0} scoring, {self.repair_llm_calls or 0} repair "
            f"({self.repair_forced or 0} steps with a single option, no call)"
            + (f", {self.needs_llm_calls} planning needs" if self.needs_llm_calls is not None else "")
            + ", "
            f"{self.symbolic_fallbacks} symbolic fallback(s); {self.seconds:.1f} s"
        ]


#: nested under ``consistency``, after the planners' own sections (it follows whichever planner ran)
register_section("consistency", RepairStats, order=50)
