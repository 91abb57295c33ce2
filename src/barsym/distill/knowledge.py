"""One-step knowledge of the game: how every item of the rule book is obtained, at many counts.

BAR's decomposer asks the model one thing per goal -- the step that makes it and what that step
needs -- and, without facts in its prompt, only what the model knows answers it. The LLMs of BAR
and DEPS know the recipes from pretraining; a 135M model has to be taught them. This module
writes that knowledge as examples in the decomposer's own no-facts prompt (``Goal: 5 stick`` ->
``craft 5 stick: 4 planks``), for every item the symbolic decomposer can obtain, each at a fixed
spread of counts drawn the same way for every item, so a count is never chosen for being a
benchmark's: the knowledge of an item is not a task.

What the data must not hold is a task (:mod:`.goals`, "teach knowledge, hold out tasks"): a whole
plan for an evaluation goal from its evaluation start. One step of one item is not a plan; the
chained replies of one plan (the ``bar-nofacts`` kind) are, and stay restricted as before.

The reply is the symbolic decomposer's answer for the goal alone, in a plan for that goal from an
empty start (no spare units of earlier batches, no fuel already budgeted: the decomposer asks the
model only for what the plan so far leaves open, and the planner credits the rest). Each reply is
checked against the grammar the planner sends in vocab mode, which admits any item and count.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..kb import KnowledgeBase
from ..model import Goal
from ..planner.decomposer import PlanContext, PlanningError, layer_goal
from .oracle import Example, admitted

KIND = "know"

#: Every item is taught at the counts 1-8 (the counts one plan's sub-goals mostly ask for) and at
#: ``EXTRA_COUNTS`` more drawn from 9-64 (bigger batches, so the arithmetic is not a table of eight).
SMALL_COUNTS = tuple(range(1, 9))
EXTRA_COUNTS = 3
MAX_DRAWN = 64
#: a layer has one question ("Goal: layer 2") where an item has eleven, and the three differ in one token:
#: each is taught this many times (the trainer repeats an example by its ``repeat``). 12 (as often as an
#: item's counts) was too few: the adapter taught so answered "Goal: layer 1" with a stone pickaxe and
#: "Goal: layer 2" with an iron one (bench/bench_know.py, 2026-12-07), and every plan past stone asks both
LAYER_REPEATS = 48


def counts_for(rng: random.Random) -> list[int]:
    """The counts one item is taught at: 1-8 and ``EXTRA_COUNTS`` drawn from 9-64 (the same rule for every item)."""
    return list(SMALL_COUNTS) + rng.sample(range(len(SMALL_COUNTS) + 1, MAX_DRAWN + 1), EXTRA_COUNTS)


class KnowledgeWriter:
    """The decomposer's no-facts question for a goal, answered by the symbolic decomposer (vocab mode's grammar)."""

    def __init__(self, kb: KnowledgeBase, graph):
        from ..llm.fake import ScriptedLLM
        from ..reasoning.planners.backward.bar_decomposer import LLMDecomposer

        self.kb = kb
        self.decomposer = LLMDecomposer(kb, ScriptedLLM([]), mode="vocab", facts=False, graph=graph, log=False)
        self.symbolic = self.decomposer.conventions
        self.grammar = self.decomposer.grammars.vocab()

    def items(self) -> list[str]:
        """Every name the decomposer may be asked about that the symbolic decomposer obtains from an empty start."""
        names = sorted(set(self.kb.generic) | {a.item for a in self.symbolic.rules.every_action() if a.item})
        return [name for name in names if self.answer(Goal(item=name, count=1)) is not None]

    def answer(self, goal: Goal) -> tuple[list[dict[str, str]], str] | None:
        """(messages, reply) for ``goal`` in a plan for itself from an empty start; None if there is no answer."""
        context = question_context(self.kb, goal)
        try:
            reply = self._render(self.symbolic.decompose(goal, context))
        except (PlanningError, ValueError):
            return None
        if not admitted(reply, self.grammar):
            return None
        return self.decomposer.prompts.first(goal, context), reply

    @staticmethod
    def _render(decomposition) -> str:
        from ..reasoning.grammars.reply_grammar import render_reply

        return render_reply(decomposition)

    def examples(self, items: list[str], rng: random.Random) -> Iterator[Example]:
        """Every item at its counts, then every layer: ``{"kind": "know", ...}`` examples, in a seeded order."""
        for item in items:
            for count in counts_for(rng):
                found = self.answer(Goal(item=item, count=count))
                if found is not None:
                    messages, reply = found
                    yield {"kind": KIND, "goal": item, "count": count, "messages": messages, "reply": reply}
        for layer in range(1, self.kb.deepest_layer + 1):
            goal = layer_goal(layer)
            found = self.answer(goal)
            if found is not None:
                messages, reply = found
                yield {
                    "kind": KIND,
                    "goal": goal.item,
                    "count": 1,
                    "messages": messages,
                    "reply": reply,
                    "repeat": LAYER_REPEATS,
                }


def question_context(kb: KnowledgeBase, goal: Goal) -> PlanContext:
    """The plan a knowledge question is asked in: one for the goal alone, from an empty start; for a layer, a
    plan that needs every tier, so each layer is dug with its own pickaxe, as BAR's plans do
    (bench/bench_know.py asks the model in the same context)."""
    from ..reasoning.prompts.few_shot import EXAMPLE_ROOT

    return PlanContext(kb, EXAMPLE_ROOT if goal.item.startswith("layer:") else goal)
