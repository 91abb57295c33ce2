"""The knowledge base's facts for a whole task, in plan order: what the forward planners (DEPS, CoT) are told.

``bar`` is told, for every goal it decomposes, how the knowledge base makes
that goal (:mod:`.facts`). The forward planners write the whole plan in one
reply, so they get the same facts for every item the task involves, at once.
The items are listed in the order a plan can make them -- the symbolic
planner's plan for the task, leaves first -- which measured better than goal
order (the goal first): the model writes its plan first step first and reads
the facts the same way.

Each line is one item's best way (the crafting graph's cheapest, as in
``bar``'s facts) with the counts of this task, e.g. ``craft 4 planks (1 craft
of 4) needs 1 logs``, and each dig down the plan makes, with its pickaxe. The
model still writes every step, count and inventory itself; nothing is
checked on its behalf.
"""

from __future__ import annotations

from ...model import Goal, StepType
from ...planner.decomposer import PlanningError
from ...sim import State
from .facts import FactBook

__all__ = ["PlanFacts"]

HEADER = "Known, in the order a plan can use it:"


class PlanFacts:
    """Fact lines for tasks, from the symbolic planner and the rule book's facts (:class:`~.facts.FactBook`)."""

    def __init__(self, symbolic):
        """``symbolic`` is barsym's symbolic planner (a BackwardPlanner with a SymbolicDecomposer)."""
        self.symbolic = symbolic
        decomposer = symbolic.decomposer
        self.book = FactBook(
            decomposer.rules,
            decomposer.graph,
            choose=decomposer.choose,
            tool_for=decomposer.tool_for,
            fuel=decomposer.fuel,
        )
        self._cache: dict[tuple, str] = {}

    def lines(self, goal: Goal, start: State | None = None) -> list[str]:
        """One line per item the task makes (first made first) and per dig down; [] when the goal is not reachable."""
        try:
            plan = self.symbolic.plan(goal, start).plan
        except PlanningError:  # an unreachable goal has no facts; the planner says why elsewhere
            return []
        held = start.count if start is not None and start.inventory else None  # a held tool is named, not made
        out: list[str] = []
        seen: set[tuple] = set()
        for step in plan.steps:
            if step.type is StepType.CLIMB_UP:
                continue
            if step.type is StepType.DIG_DOWN:
                key: tuple = ("dig", step.tool)
                facts = None
            else:
                key = ("item", step.item)
                facts = self.book.for_item(step.item, step.count or 1, held=held)
            if key in seen:
                continue
            seen.add(key)
            if facts is None:
                out.append(f"dig down with {step.tool or 'a pickaxe'} goes one layer deeper")
            elif facts.ways:
                out.append(facts.ways[0].text())
        return out

    def text(self, goal: Goal, start: State | None = None) -> str:
        """The block for the task message ("" when nothing is known)."""
        key = (goal.item, goal.count, start)
        if key not in self._cache:
            lines = self.lines(goal, start)
            self._cache[key] = (HEADER + "\n" + "\n".join(f"- {line}" for line in lines)) if lines else ""
        return self._cache[key]
