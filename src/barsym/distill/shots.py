"""``bar-shots``: BAR's question without facts, with the answer's recipe among the few-shot turns.

Why this kind exists: without facts, BAR's decomposer has only the model's own
knowledge and the prompt's few-shot turns to go on, and the few-shot turns
answer ``crafting_table``, ``planks``, ``stick`` and ``wooden_pickaxe`` -- the
sub-goals of nearly every benchmark plan. The base model copies them (53 of 53
``wooden_pickaxe`` goals right on BAR's 53 tasks); an adapter taught on
``bar-nofacts`` examples lost that (0 of 53), because those items are held out
and so no training question ever had its answer in the prompt: the model
learned to answer from its weights alone, and wrote ``1 planks`` for a
crafting table the prompt shows needs 4.

Each example here is a ``bar-nofacts`` example whose few-shot block gets one
more turn, inserted among its later turns (where the crafts are): most often the
asked item at the same or another count (so the answer is read from the prompt and scaled
to the batches asked), sometimes another training item (so it is not copied
blindly). The inserted turns are answered by the symbolic decomposer as the
real few-shot turns are, and only training items are asked or shown, so the
held-out rule stands: no benchmark target is the goal of an example.
"""

from __future__ import annotations

import random

from ..model import Goal
from ..planner.decomposer import PlanContext, PlanningError
from ..reasoning.grammars.reply_grammar import render_reply
from ..reasoning.prompts.few_shot import EXAMPLE_ROOT, goal_message
from .oracle import Example

#: how often the inserted turn shows another item than the one asked
DISTRACTOR_SHARE = 0.3
#: the counts an inserted turn asks for: the asked count or another, so the answer is copied or scaled
SHOWN_COUNTS = (1, 1, 2, 3, 4, 6, 8)


def shot_turn(kb, symbolic, goal: Goal) -> tuple[str, str] | None:
    """The few-shot turn for ``goal``, answered as the prompt's own turns are (in the example plan's context)."""
    try:
        answer = symbolic.decompose(goal, PlanContext(kb, EXAMPLE_ROOT))
    except PlanningError:
        return None
    return goal_message(goal), render_reply(answer)


def with_shot(example: Example, turn: tuple[str, str], rng: random.Random) -> Example:
    """``example`` with ``turn`` put among the later half of its few-shot turns (a first-try call's prompt)."""
    messages = example["messages"]
    pairs = (len(messages) - 2) // 2  # system, (user, assistant) * pairs, the goal
    at = 1 + 2 * rng.randint(pairs // 2, pairs)
    asked, answered = turn
    shot = [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    return {**example, "kind": "bar-shots", "messages": messages[:at] + shot + messages[at:]}


def shot_examples(kb, symbolic, examples: list[Example], items: list[str], rng: random.Random) -> list[Example]:
    """``bar-nofacts`` examples, each with one more few-shot turn: its own item (at any count), or another item."""
    out = []
    for example in examples:
        item = rng.choice(items) if rng.random() < DISTRACTOR_SHARE else example["goal"]
        shown = Goal(item=item, count=rng.choice(SHOWN_COUNTS))
        turn = shot_turn(kb, symbolic.decomposer, shown)
        if turn is not None:
            out.append(with_shot(example, turn, rng))
    return out
