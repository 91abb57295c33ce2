"""BAR's module (b), state consistency: step scores, anchors, forward repair between anchors.

``StateConsistency(kb, ConsistencyConfig(...)).repair(plan, goal)`` returns a
:class:`RepairResult`: the repaired plan, every step's provenance (``kept``,
``repaired-llm``, ``repaired-symbolic``), the verdicts before and after, and
each round's scores and anchors. The model side (its step scores, its forward
repairer) lives in :mod:`barsym.reasoning`; ``barsym.reasoning.model_consistency``
builds the configurations that use it.
"""

from .anchors import DEFAULT_T, AnchorMethod, AnchorPair, ScoreSource, merge, sliding_window, step_scoring
from .config import DEFAULT_ROUNDS, ConsistencyConfig, RepairerKind
from .repair import CannotRepair, StateConsistency, SymbolicRepairer
from .results import Provenance, RepairResult, RoundRecord
from .scores import DEFAULT_K, FailureKind, StepFault, StepScore, combine, score_plan, simulator_scores

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
