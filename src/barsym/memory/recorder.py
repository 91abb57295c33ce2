"""Writing a plan into the memory: its decomposition tree and how the plan executed.

Why the recorder needs the memory decomposer: the context an answer depends on
(tools, stations and layer at hand) is only known while planning, so the
:class:`~barsym.memory.decomposer.MemoryDecomposer` notes it per answer and the
recorder joins those notes with the finished tree. Answers that used fuel
already budgeted by earlier goals (``fuel_credit``) are not recorded: they are
right only inside the plan that budgeted the fuel. Plan-level fallbacks (the
tree of a symbolic re-plan) went around the memory decomposer, have no noted
context, and are not recorded either.
"""

from __future__ import annotations

from ..planner.result import PlanResult
from .decomposer import MemoryDecomposer
from .store import DecompositionRecord, MemoryStore


def records(result: PlanResult, memory: MemoryDecomposer) -> list[DecompositionRecord]:
    """The recordable decompositions of ``result``'s tree, in tree order."""
    out = []
    for node in result.nodes:
        d = node.decomposition
        if d is None or d.fuel_credit:
            continue
        context = memory.context_of(d)
        if context is None:
            continue
        out.append(DecompositionRecord(
            node.goal.item, node.goal.count, context, d.step.model_dump(mode="json", exclude_none=True),
            [g.model_dump(mode="json") for g in d.subgoals],
            d.yields if d.yields is not None and d.yields != d.step.count else None, d.provenance))
    return out


def record(store: MemoryStore, task: str, result: PlanResult, memory: MemoryDecomposer,
           executions: list[tuple[str, int, int, int]] = ()) -> int:
    """Store the plan, its decompositions and its executions (world, seed, runs, successes) in one transaction."""
    return store.record_plan(task, result.planner, (result.goal.item, result.goal.count),
                             [str(step) for step in result.plan.steps], records(result, memory), list(executions))
