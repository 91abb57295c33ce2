"""Whether a state holds a goal: one test for the validator and the execution worlds.

A plan succeeds when every step runs *and* the final inventory holds the goal
(DEPS detects success the same way, from the inventory). Items that count as
the goal (a member of a generic family, a generic stand-in) count.
"""

from __future__ import annotations

from ..kb import KnowledgeBase, UnknownItemError
from ..model import Goal
from .failure import Code, Failure
from .state import State


def goal_failure(kb: KnowledgeBase, goal: Goal, state: State) -> Failure | None:
    """None when ``state`` holds ``goal``; else why not (``goal_not_reached``, or ``unknown_item`` for the goal)."""
    try:
        item = kb.resolve(goal.item)
    except UnknownItemError as exc:
        return Failure(Code.UNKNOWN_ITEM, f"goal: {exc}", item=goal.item, suggestions=tuple(exc.suggestions))
    have = state.count_any(kb.acceptable(item))
    if have >= goal.count:
        return None
    return Failure(Code.GOAL_NOT_REACHED, f"the plan ends with {have} {item}; the goal needs {goal.count}",
                   item=item, needed=goal.count, had=have)
