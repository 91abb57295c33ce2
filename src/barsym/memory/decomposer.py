"""The memory decomposer: remembered decompositions answer before any model is asked.

It wraps another decomposer (the LLM's, or the symbolic one) by composition, so
the planners stay as they are: :func:`with_memory` swaps it in front of the
decomposer a planner already has. For a goal the memory holds, the remembered
decomposition with the best pooled success rate (at least ``threshold`` over at
least ``min_runs`` executions) answers without a call, provenance ``memory``.

Why it checks every answer with the verifier: the rule book or the recipe data
may have changed since the entry was written. An entry that no longer verifies
is marked stale in the store (never used again, and never silently) and the
next candidate, or the wrapped decomposer, answers instead.

Why "compatible context" is a subset test: a decomposition lists all its
subgoals (the planner covers those already at hand), so an answer written when
fewer tools, stations and layers were at hand is still right with more. What
an answer took from the plan so far (spare units of an earlier batch, ``yields``
below the step's count) is only reused when the current plan has that surplus
too; answers that used budgeted fuel are never recorded (see recorder.py).

It also notes the context of every answer it passes on, so a
:class:`~barsym.memory.recorder.Recorder` can write the plan's tree afterwards.
"""

from __future__ import annotations

import dataclasses

from ..kb import KnowledgeBase, Rules
from ..model import MAX_COUNT, Goal, Step, StepType
from ..planner.decomposer import Decomposer, Decomposition, PlanContext, goal_layer
from ..planner.verify import check_decomposition
from .examples import DEFAULT_EXAMPLES, CloseGoalExamples
from .row_checks import Vocabulary
from .stats import MemoryStats
from .store import Candidate, MemoryStore

MEMORY = "memory"
DEFAULT_THRESHOLD = 0.5
DEFAULT_MIN_RUNS = 5


def context_key(context: PlanContext) -> dict:
    """What an answer depends on: tools and stations at hand (planned or held) and the deepest layer reached."""
    at_hand = {item for item, units in context.kept.items() if units > 0}
    at_hand |= {item for item, units in context.start.inventory if units > 0}
    layer = max([context.start.layer, *context.layers])
    return {"at_hand": sorted(at_hand), "layer": layer}


def compatible(remembered: dict, now: dict) -> bool:
    """The remembered context is contained in today's: everything at hand then is at hand now."""
    return set(remembered.get("at_hand", ())) <= set(now["at_hand"]) and remembered.get("layer", 0) <= now["layer"]


class MemoryDecomposer:
    """A :class:`Decomposer` that asks the memory first and the wrapped decomposer otherwise."""

    def __init__(
        self,
        kb: KnowledgeBase,
        inner: Decomposer,
        store: MemoryStore | None,
        threshold: float = DEFAULT_THRESHOLD,
        min_runs: int = DEFAULT_MIN_RUNS,
        rules: Rules | None = None,
    ):
        self.kb, self.inner, self.store = kb, inner, store
        self.threshold, self.min_runs = threshold, min_runs
        self.rules = rules if rules is not None else getattr(inner, "rules", None)
        self.name = f"memory+{getattr(inner, 'name', 'decomposer')}"
        self.graph = getattr(inner, "graph", None)
        self.stats = MemoryStats()
        self.contexts: dict[int, tuple[Decomposition, dict]] = {}  # id(answer) -> (answer, its context)
        self.examples: CloseGoalExamples | None = None  # set by with_memory when the inner decomposer takes them

    def start_plan(self) -> None:
        self.stats = MemoryStats()
        self.contexts = {}
        if self.examples is not None:
            self.examples.start_plan()

    def start_attempt(self) -> None:
        """BAR's loop plans the task once more: count what this attempt's goals were answered by, afresh."""
        self.stats = dataclasses.replace(self.stats, hits=0, misses=0, spare=0)
        restart = getattr(self.inner, "start_attempt", None)
        if restart is not None:
            restart()

    def context_of(self, decomposition: Decomposition) -> dict | None:
        kept = self.contexts.get(id(decomposition))
        return kept[1] if kept is not None and kept[0] is decomposition else None

    def decompose(self, goal: Goal, context: PlanContext) -> Decomposition:
        key = context_key(context)
        spare = self._spare(goal, context)
        if spare >= goal.count:  # the plan's spare units cover it: the wrapped decomposer says so without a call
            self.stats.spare += 1
            answer = self.inner.decompose(goal, context)
            self.contexts[id(answer)] = (answer, key)
            return answer
        answer = None
        if self.store is not None and spare:  # an answer recorded with spare units of its own plan, as now
            answer = self._remembered(goal, context, key, uses_spare=True)
            if answer is None:  # one for the rest, widened by the spare units
                rest = self._remembered(Goal(item=goal.item, count=goal.count - spare), context, key, spare_used=spare)
                answer = _widen(rest, spare) if rest is not None else None
        if self.store is not None and answer is None:  # one for the whole goal (a new batch, as the planners do)
            answer = self._remembered(goal, context, key)
        if answer is None:
            self.stats.misses += 1
            answer = self.inner.decompose(goal, context)
        else:
            self.stats.hits += 1
        self.contexts[id(answer)] = (answer, key)
        return answer

    def _spare(self, goal: Goal, context: PlanContext) -> int:
        """Units of the goal's item that earlier batches of this plan make beyond what was asked."""
        if goal_layer(goal) is not None or not self.kb.is_known(goal.item):
            return 0
        return context.surplus(self.kb.resolve(goal.item))

    def _remembered(
        self, goal: Goal, context: PlanContext, key: dict, spare_used: int = 0, uses_spare: bool = False
    ) -> Decomposition | None:
        """The best remembered answer that applies here.

        ``spare_used``: spare units already given to this goal (not there for the answer to use again);
        ``uses_spare``: only answers that take spare units themselves.
        """
        above = {g.item for g in context.path}
        for candidate in self.store.candidates(goal.item, goal.count):
            if candidate.runs < self.min_runs or candidate.rate < self.threshold:
                break  # sorted best rate first (ties: more runs first)
            if not compatible(candidate.record.context, key):
                continue
            answer = _decomposition(candidate)
            if any(sub.item in above for sub in answer.subgoals):
                continue  # would loop through a goal further up
            takes_spare = answer.yields is not None and answer.yields < (answer.step.count or 0)
            if uses_spare and not takes_spare:
                continue
            if takes_spare:
                item = self.kb.resolve(answer.step.item) if answer.step.item else None
                if item is None or context.surplus(item) - spare_used < answer.step.count - answer.yields:
                    continue  # it relied on spare units this plan does not have
            problems = check_decomposition(self.kb, goal, answer, self.rules)
            if problems:
                self.store.mark_stale(candidate.signature, "; ".join(problems))
                self.stats.stale += 1
                continue
            return answer
        return None


def _widen(answer: Decomposition, spare: int) -> Decomposition:
    """An answer for the goal less its spare units, as an answer for the whole goal (the spare units join the step).

    Why: a remembered answer that makes the whole count again would waste what
    an earlier batch already made (measured: plans 1 step longer, "valid with
    waste", Acc 10 points lower over BAR's redstone and diamond tasks).
    """
    if not spare or answer.step.type is StepType.DIG_DOWN:
        return answer
    step = answer.step.model_copy(update={"count": min(MAX_COUNT, (answer.step.count or 0) + spare)})
    note = f"{answer.note}; {spare} spare from an earlier batch used"
    return dataclasses.replace(answer, step=step, yields=answer.made, note=note)


def _decomposition(candidate: Candidate) -> Decomposition:
    rate = f"{candidate.successes}/{candidate.runs} runs succeeded over {candidate.plans} plan(s)"
    record = candidate.record
    return Decomposition(
        Step.model_validate(record.step),
        tuple(Goal.model_validate(g) for g in record.subgoals),
        MEMORY,
        yields=record.yields,
        note=f"from memory: {rate}",
    )


class MemoryPlanner:
    """A planner whose decomposer has the memory in front; adds the memory counters to each result's stats."""

    def __init__(self, planner, memory: MemoryDecomposer):
        self.planner, self.memory = planner, memory
        self.name = planner.name

    def plan(self, goal: Goal, start=None):
        self.memory.start_plan()
        result = self.planner.plan(goal, start)
        if self.memory.examples is not None:
            self.memory.stats.examples = self.memory.examples.goals_given
        result.stats = result.stats.with_section(self.memory.stats)
        return result


def with_memory(
    planner,
    kb: KnowledgeBase,
    store: MemoryStore | None,
    threshold: float = DEFAULT_THRESHOLD,
    min_runs: int = DEFAULT_MIN_RUNS,
    examples: int = DEFAULT_EXAMPLES,
) -> MemoryPlanner:
    """Put a memory decomposer in front of ``planner``'s decomposer (``store=None``: only note contexts).

    A wrapped decomposer that takes few-shot examples (the LLM decomposer's
    ``examples`` hook) is also given up to ``examples`` remembered answers of
    close goals for each goal the memory passes on to it (:mod:`.examples`).

    ``bar`` and ``llm-only`` keep BAR's loop in ``planner.inner`` (``bar-sc``
    one level further down); the symbolic planner is the loop itself. The inventory search (rules without gathering)
    has no decomposer, so it cannot use a memory: ValueError.
    """
    loop = planner
    while hasattr(loop, "inner"):  # bar-sc -> bar -> BAR's loop: the memory goes in front of the loop's decomposer
        loop = loop.inner
    if not hasattr(loop, "decomposer"):
        raise ValueError(f"planner {planner.name} has no goal decomposer, so it cannot use a memory")
    if store is not None and store.vocabulary is None:  # every remembered row is checked against kb's names
        store.vocabulary = Vocabulary.of(kb)
    memory = MemoryDecomposer(kb, loop.decomposer, store, threshold, min_runs, rules=getattr(loop, "rules", None))
    if store is not None and examples > 0 and hasattr(loop.decomposer, "examples"):
        memory.examples = CloseGoalExamples(kb, store, threshold, min_runs, examples, memory.rules)
        loop.decomposer.examples = memory.examples
    loop.decomposer = memory
    return MemoryPlanner(planner, memory)
