"""What a remembered plan may hold, checked on the way in (``memory import``) and on the way out (every read).

Why both ways: the models of :mod:`.shapes` say what *shape* a plan has, not
whether it makes sense. An import of ``mine 3 unobtainium``, a step ``fly``,
the world ``moon`` or layer 99 was accepted, and a row edited in the file
(``successes = runs + 100``, ``runs = 1e308``, ``goal_count = 'abc'``) was
shown as "210/10 runs" or ``"runs": Infinity`` and used by ``plan --memory``
without a word. So an import is checked against the knowledge base and the
step notation (:class:`Vocabulary`, all or none), and every row the store reads
passes :data:`GOOD_EXECUTION` / :data:`GOOD_GOAL` (in SQL, so a bad row never
reaches a sum) or is skipped with one warning naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bar_io import step_from_text
from ..model import MAX_COUNT
from ..planner.decomposer import LAYER_PREFIX
from ..redact import escape_controls
from .shapes import ExportedPlan, RememberedDecomposition, parsed_export

__all__ = [
    "GOOD_EXECUTION",
    "GOOD_GOAL",
    "MAX_RUNS",
    "Vocabulary",
    "checked_export",
    "decomposition_problem",
    "plan_problem",
]

#: the most runs one execution row may count (``memory build --runs`` stops at 100000): sums stay exact
MAX_RUNS = 10**9

#: an execution row that can be counted: whole numbers, 0 <= successes <= runs <= MAX_RUNS
GOOD_EXECUTION = (
    "typeof(runs) = 'integer' AND typeof(successes) = 'integer' "
    f"AND runs BETWEEN 0 AND {MAX_RUNS} AND successes BETWEEN 0 AND runs"
)
#: a decomposition row whose goal is a goal: a whole count from 1 to MAX_COUNT, an item name of text
GOOD_GOAL = f"typeof(goal_item) = 'text' AND typeof(goal_count) = 'integer' AND goal_count BETWEEN 1 AND {MAX_COUNT}"


@dataclass(frozen=True)
class Vocabulary:
    """The names a remembered plan may use: the knowledge base's items, the execution worlds, its layers."""

    items: frozenset[str]
    worlds: frozenset[str]
    deepest_layer: int

    @classmethod
    def of(cls, kb) -> "Vocabulary":
        from ..sim.options import WORLDS

        return cls(frozenset(kb.items) | frozenset(kb.aliases), frozenset(WORLDS), kb.deepest_layer)

    def item_problem(self, name: str) -> str | None:
        """Why ``name`` is not an item (or a ``layer:N`` goal) of this knowledge base, or None."""
        if name.startswith(LAYER_PREFIX):
            number = name[len(LAYER_PREFIX) :]
            if number.isascii() and number.isdigit() and int(number) <= self.deepest_layer:
                return None
            return f"{_cut(name)} is not a layer from 0 to {self.deepest_layer}"
        return None if name in self.items else f"unknown item {_cut(name)}"


def _cut(text: str, most: int = 60) -> str:
    """A name quoted back, escaped and cut: a 10 MB name is not echoed whole."""
    shown = repr(text) if len(text) <= most else repr(text[:most]) + f"... ({len(text)} characters)"
    return escape_controls(shown)


def _control(text: str) -> bool:
    return escape_controls(text) != text


def decomposition_problem(decomposition: RememberedDecomposition, vocabulary: Vocabulary | None) -> str | None:
    """What is wrong with one decomposition beyond its shape (items, layer, control characters), or None."""
    names = [decomposition.goal_item, *decomposition.context.at_hand, *(g.item for g in decomposition.subgoals)]
    if decomposition.step.item is not None:
        names.append(decomposition.step.item)
    texts = [*names, decomposition.provenance, decomposition.step.tool or ""]
    bad = next((t for t in texts if _control(t)), None)
    if bad is not None:
        return f"control characters in {_cut(bad)}"
    if vocabulary is None:
        return None
    if decomposition.context.layer > vocabulary.deepest_layer:
        return f"context layer {decomposition.context.layer} is deeper than the deepest, {vocabulary.deepest_layer}"
    return next((p for p in map(vocabulary.item_problem, names) if p), None)


def plan_problem(plan: ExportedPlan, vocabulary: Vocabulary | None) -> str | None:
    """What is wrong with one exported plan beyond its shape, or None: every step a step of known items,
    known worlds, counts in range, no control characters (``memory import`` refuses the file for it)."""
    if not plan.steps:
        return "no steps (a remembered plan has at least one)"
    bad = next((t for t in (plan.task, plan.planner, plan.goal[0], *plan.steps) if _control(t)), None)
    if bad is not None:
        return f"control characters in {_cut(bad)}"
    for number, text in enumerate(plan.steps, start=1):
        try:
            step = step_from_text(text)
        except ValueError as exc:
            return f"steps.{number - 1}: {_cut(text)} is not a step ({exc})"
        if vocabulary is not None and step.item is not None and vocabulary.item_problem(step.item):
            return f"steps.{number - 1}: {vocabulary.item_problem(step.item)}"
    for world, _, runs, _ in plan.executions:
        if vocabulary is not None and world not in vocabulary.worlds:
            return f"unknown world {_cut(world)}; the worlds are {', '.join(sorted(vocabulary.worlds))}"
        if runs > MAX_RUNS:
            return f"an execution counts {runs} runs; at most {MAX_RUNS} fit one record"
    if vocabulary is not None and vocabulary.item_problem(plan.goal[0]):
        return f"goal: {vocabulary.item_problem(plan.goal[0])}"
    for index, decomposition in enumerate(plan.decompositions):
        problem = decomposition_problem(decomposition, vocabulary)
        if problem:
            return f"decompositions.{index}: {problem}"
    return None


def checked_export(record: object, number: int, vocabulary: Vocabulary | None) -> tuple:
    """An exported record as ``_insert_plan`` arguments, its shape and its sense checked; ValueError naming it."""
    arguments = parsed_export(record, number)  # the shape: the models the store reads with
    problem = plan_problem(ExportedPlan.model_validate(record), vocabulary)
    if problem:
        raise ValueError(f"record {number}: {problem}")
    return arguments
