"""BAR-style backward planning: the loop, the decomposers, fusion and ordering.

``make_planner("symbolic", kb).plan(Goal(item="diamond_pickaxe"))`` returns a
:class:`PlanResult` with the validated plan and its decomposition tree.
"""

from .backward import BackwardPlanner
from .decomposer import (
    Decomposer,
    Decomposition,
    ErrorKind,
    PlanContext,
    PlanningError,
    Unanswered,
    goal_layer,
    layer_goal,
)
from .ordering import Need, NoOrder, fuse, fusion_key, order_steps
from .registry import DEFAULT_PLANNER, Supports, Unsupported, make_planner, planner_names, register
from .result import GoalNode, PlanResult
from .stats import LLMStats, PlanStats
from .symbolic import SymbolicDecomposer
from .verify import check_decomposition, subgoal_roles

__all__ = [
    "DEFAULT_PLANNER",
    "BackwardPlanner",
    "Decomposer",
    "Decomposition",
    "ErrorKind",
    "GoalNode",
    "Need",
    "NoOrder",
    "LLMStats",
    "PlanContext",
    "PlanResult",
    "PlanStats",
    "PlanningError",
    "Supports",
    "SymbolicDecomposer",
    "Unanswered",
    "Unsupported",
    "check_decomposition",
    "fuse",
    "fusion_key",
    "goal_layer",
    "layer_goal",
    "make_planner",
    "order_steps",
    "planner_names",
    "register",
    "subgoal_roles",
]
