"""Few-shot examples from close goals: what the memory offers a goal it cannot answer itself.

A goal the memory has never seen may still resemble one it has: ``iron_axe``
and ``iron_pickaxe`` are crafted from the same recipe shape (3 of a material,
2 sticks, on a crafting table), ``golden_pickaxe`` and ``iron_pickaxe`` are
the same tool kind of another material. BAR's point is that decompositions
transfer; for a goal that is not in memory the best transfer barsym can make
without guessing is to *show* the model the remembered, well-executing answer
of the closest goals, just before the question, and let it adapt the pattern.
The answer is still checked by the verifier like any other: an example is
advice, never an answer.

Why closeness is computed from the knowledge base, not from names alone: a
shared word ("iron") says the same family, but only the same kind of step and
the same recipe shape (a table or not, ingredient counts, batch size) says the
answer has the same structure. Both count; a candidate needs the same kind of
step and at least one of the two. Remembered examples follow the memory's own
rules (success rate at or above the threshold over at least ``min_runs``
runs) and are re-checked first; one that no longer verifies is marked stale.

This module only chooses; the LLM decomposer renders the examples in its
own prompt format (:attr:`barsym.reasoning.planners.backward.bar_decomposer.LLMDecomposer.examples`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kb import KnowledgeBase, Rules
from ..model import Goal, Step
from ..planner.decomposer import Decomposition, PlanContext, goal_layer
from ..planner.verify import check_decomposition
from .store import Candidate, MemoryStore

DEFAULT_EXAMPLES = 2
EXAMPLE = "memory-example"


@dataclass(frozen=True)
class Closeness:
    """Why a remembered goal is close to the asked one; ``score`` orders candidates (higher is closer)."""

    same_item: bool
    same_shape: bool
    shared_words: tuple[str, ...]

    @property
    def score(self) -> int:
        return 4 * self.same_item + 2 * self.same_shape + len(self.shared_words)


def _kinds(kb: KnowledgeBase, item: str) -> tuple[str, ...]:
    """Every way the item is made (craft, smelt, mine, kill): ingots are crafted *and* smelted, tools only crafted."""
    return tuple(kb.producers(item))


def recipe_shape(kb: KnowledgeBase, item: str) -> tuple | None:
    """The structure of the item's first recipe as a decomposition sees it: a table or not, batch, ingredient counts.

    Not the exact grid: an axe (2x3) and a pickaxe (3x3) both need a table and
    take 3 + 2 units, so their decompositions have the same form.
    """
    kinds = _kinds(kb, item)
    if kinds == ("craft",):
        recipe = kb.crafts[item][0]
        return ("craft", recipe.needs_table, recipe.count, tuple(sorted(i.count for i in recipe.ingredients)))
    source = kb.sources.get(item)
    return (kinds, source.tool_kind if source else None) if kinds else None


def closeness(kb: KnowledgeBase, asked: str, remembered: str) -> Closeness | None:
    """How ``remembered`` resembles ``asked`` (canonical names), or None when it is no example for it."""
    if not _kinds(kb, asked) or _kinds(kb, asked) != _kinds(kb, remembered):
        return None
    same_shape = recipe_shape(kb, asked) == recipe_shape(kb, remembered)
    shared = tuple(sorted(set(asked.split("_")) & set(remembered.split("_"))))
    if asked != remembered and not same_shape and not shared:
        return None
    return Closeness(asked == remembered, same_shape, shared)


class CloseGoalExamples:
    """The examples provider: ``provider(goal, context)`` -> up to ``limit`` (goal, remembered answer) pairs.

    The closest example comes last, nearest the question. ``goals_given``
    counts the goals that received at least one example (reset per plan).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        store: MemoryStore,
        threshold: float,
        min_runs: int,
        limit: int = DEFAULT_EXAMPLES,
        rules: Rules | None = None,
    ):
        self.kb, self.store, self.rules = kb, store, rules
        self.threshold, self.min_runs, self.limit = threshold, min_runs, limit
        self.goals_given = 0
        self.shown: list[tuple[Goal, Goal]] = []  # (asked, example goal), for reports and tests

    def start_plan(self) -> None:
        self.goals_given = 0
        self.shown = []

    def __call__(self, goal: Goal, context: PlanContext) -> list[tuple[Goal, Decomposition]]:
        if self.limit <= 0 or goal_layer(goal) is not None or not self.kb.is_known(goal.item):
            return []
        asked = self.kb.resolve(goal.item)
        ranked = []
        for item, count in self.store.goals():
            if (item, count) == (asked, goal.count) or goal_layer(Goal(item=item, count=count)) is not None:
                continue  # the memory decomposer already judged the goal itself
            if not self.kb.is_known(item):
                continue
            close = closeness(self.kb, asked, self.kb.resolve(item))
            if close is not None:
                ranked.append((-close.score, abs(count - goal.count), item, count))
        chosen = []
        for _, _, item, count in sorted(ranked):
            example = self._best(Goal(item=item, count=count))
            if example is not None:
                chosen.append(example)
            if len(chosen) == self.limit:
                break
        if chosen:
            self.goals_given += 1
            self.shown += [(goal, g) for g, _ in chosen]
        return chosen[::-1]  # closest last

    def _best(self, goal: Goal) -> tuple[Goal, Decomposition] | None:
        """The goal's best remembered answer that passes the memory's bar and still verifies."""
        for candidate in self.store.candidates(goal.item, goal.count):
            if candidate.runs < self.min_runs or candidate.rate < self.threshold:
                return None  # best first: nothing further down passes either
            answer = example_decomposition(candidate)
            problems = check_decomposition(self.kb, goal, answer, self.rules)
            if not problems:
                return goal, answer
            self.store.mark_stale(candidate.signature, "; ".join(problems))
        return None


def example_decomposition(candidate: Candidate) -> Decomposition:
    record = candidate.record
    return Decomposition(
        Step.model_validate(record.step),
        tuple(Goal.model_validate(g) for g in record.subgoals),
        EXAMPLE,
        yields=record.yields,
    )
