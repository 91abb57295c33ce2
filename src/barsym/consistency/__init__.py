"""BAR's module (b), state consistency: step scores, anchors, forward repair between anchors.

``StateConsistency(kb, ConsistencyConfig(...)).repair(plan, goal)`` returns a
:class:`RepairResult`: the repaired plan, every step's provenance (``kept``,
``repaired-llm``, ``repaired-symbolic``), the verdicts before and after, and
each round's scores and anchors. The model side (its step scores, its forward
repairer) lives in :mod:`barsym.reasoning`; ``barsym.reasoning.model_consistency``
builds the configurations that use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from .anchors import AnchorPair, merge, sliding_window, step_scoring
    from .config import DEFAULT_K, DEFAULT_ROUNDS, DEFAULT_T, AnchorMethod, ConsistencyConfig, RepairerKind, ScoreSource
    from .repair import CannotRepair, StateConsistency, SymbolicRepairer
    from .results import Provenance, RepairResult, RoundRecord
    from .scores import FailureKind, StepFault, StepScore, combine, score_plan, simulator_scores

#: loaded on first use, so that reading the options (ConsistencyConfig, for a command's arguments) does not
#: load the repairer and the planner below it
_LAZY = {
    "DEFAULT_T": "config",
    "AnchorMethod": "config",
    "AnchorPair": "anchors",
    "ScoreSource": "config",
    "merge": "anchors",
    "sliding_window": "anchors",
    "step_scoring": "anchors",
    "DEFAULT_ROUNDS": "config",
    "ConsistencyConfig": "config",
    "RepairerKind": "config",
    "CannotRepair": "repair",
    "StateConsistency": "repair",
    "SymbolicRepairer": "repair",
    "Provenance": "results",
    "RepairResult": "results",
    "RoundRecord": "results",
    "DEFAULT_K": "config",
    "FailureKind": "scores",
    "StepFault": "scores",
    "StepScore": "scores",
    "combine": "scores",
    "score_plan": "scores",
    "simulator_scores": "scores",
}

__all__ = [
    "DEFAULT_K",
    "DEFAULT_ROUNDS",
    "DEFAULT_T",
    "AnchorMethod",
    "CannotRepair",
    "AnchorPair",
    "ConsistencyConfig",
    "FailureKind",
    "Provenance",
    "RepairResult",
    "RepairerKind",
    "RoundRecord",
    "ScoreSource",
    "StateConsistency",
    "StepFault",
    "StepScore",
    "SymbolicRepairer",
    "combine",
    "merge",
    "score_plan",
    "simulator_scores",
    "sliding_window",
    "step_scoring",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
