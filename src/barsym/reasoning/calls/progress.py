"""What the planner is doing right now, as typed events, and goals in the names users know.

A fresh ``barsym plan`` spends its first second or two loading the model and
its prompt, then seconds per goal; a terminal that stays blank meanwhile looks
hung. The planners emit a :class:`ProgressEvent` at each phase and before
each goal, and the command line draws one status line from them. Goals are
shown as users say them -- ``dig down to the iron layer``, ``3 iron ingot`` --
not as the planner's ``layer:2`` and ``iron_ingot``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ...kb import KnowledgeBase
from ...model import Goal
from ...planner.stats import LLMStats

__all__ = ["Phase", "Progress", "ProgressEvent", "event_text", "goal_words"]

LAYER_PREFIX = "layer:"


class Phase(str, Enum):
    LOADING = "loading"  # the model file is being loaded
    PRIMING = "priming"  # the few-shot prefix is being loaded or evaluated
    GOAL = "goal"  # a goal is being decomposed
    DONE = "done"  # a goal has been decomposed


@dataclass(frozen=True)
class ProgressEvent:
    phase: Phase
    text: str = ""  # what is happening, in words ("loading SmolLM2-135M...", "craft 1 stone pickaxe")
    number: int = 0  # goal number within the plan (GOAL, DONE)
    estimate: int | None = None  # about how many goals the plan has (from the symbolic planner)
    stats: LLMStats | None = None  # the decomposer's counters at that moment


Progress = Callable[[ProgressEvent], None]


def event_text(event: ProgressEvent) -> str:
    """An event in words, as a status line shows it: ``loading the model ...``, ``goal 4 of about 18: 1 stone pickaxe``."""
    if event.phase in ("loading", "priming"):
        return f"{event.text} ..."
    of = f" of about {event.estimate}" if event.estimate else ""
    return f"goal {event.number}{of}: {event.text}"


def goal_words(kb: KnowledgeBase, goal: Goal) -> str:
    """``dig down to the iron layer`` for ``layer:2``; ``3 iron ingot`` for ``3 iron_ingot``."""
    if goal.item.startswith(LAYER_PREFIX):
        try:
            layer = int(goal.item[len(LAYER_PREFIX) :])
        except ValueError:
            return goal.item
        if 0 <= layer < len(kb.layers):
            return f"dig down to the {kb.layers[layer]} layer"
        return f"dig down to layer {layer}"
    return f"{goal.count} {goal.item.replace('_', ' ')}"
