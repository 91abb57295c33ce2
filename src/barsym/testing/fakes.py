"""A scripted model that never runs out: deterministic answers for whole evaluations.

:class:`~barsym.llm.fake.ScriptedLLM` replays a fixed queue, which suits one
plan; a parallel or resumed evaluation of 53 tasks needs a model whose
answer depends only on the prompt, so that any worker, in any order, gets the
same reply for the same question. :class:`FactsModel` is that: it reads the
knowledge base's ``Known:`` line in the goal's message and answers with the
first way it names (``craft 13 planks: 4 logs``), except that for about one
goal in three its *first* answer has a wrong count -- so the verifier's
feedback, the retry and the fallback all happen, as with a real small model.

``barsym.testing.fakes:facts_model`` is a backend factory a
:class:`~barsym.eval.spec.RunSpec` can name (``backend=...``).
"""

from __future__ import annotations

import re
import zlib

from ..llm.base import Completion, CompletionRequest
from ..llm.fake import RecordedCall, ScriptedLLM

__all__ = ["FactsModel", "SlowFactsModel", "asked", "facts_model", "slow_facts_model"]

_KNOWN = re.compile(
    r"Known: (?P<verb>craft|smelt|mine|kill) (?P<count>\d+) (?P<item>[a-z0-9_]+(?::[a-z0-9_]+)?)"
    r"(?: \([^)]*\))?(?: with [a-z_]+)?(?: needs (?P<needs>[^;.]+)|: (?P<listed>[^;.]+))?"
)


def asked(text: str) -> str:
    """``N item`` (or ``layer N``) a goal message asks about: its last ``Goal:`` line, else the first
    way of its ``Known:`` line (BAR's message with facts is that line alone); else the text itself."""
    if "Goal:" in text:
        return text.rsplit("Goal:", 1)[1].strip().splitlines()[0]
    match = _KNOWN.search(text)
    return f"{match['count']} {match['item']}" if match else text


def answer(call: RecordedCall) -> str:
    """The reply to the last user message: the first known way, or a line the verifier refuses."""
    text = call.last_user_message
    goal = asked(text)
    match = _KNOWN.search(text)
    if match is None:
        return f"craft 1 {goal.split()[-1] if goal.split() else 'stick'}: 1 dirt"
    needs = (match["needs"] or match["listed"] or "nothing").strip()
    head = f"{match['verb']} {match['count']} {match['item']}"
    first_try = not text.startswith("That is wrong")
    if first_try and zlib.crc32(goal.encode()) % 3 == 0:  # a wrong count, once
        head = f"{match['verb']} {int(match['count']) + 1} {match['item']}"
    return head if needs == "nothing" else f"{head}: {needs}"


class FactsModel(ScriptedLLM):
    """A :class:`ScriptedLLM` whose every reply is :func:`answer` to the prompt (never exhausted)."""

    def execute(self, request: CompletionRequest) -> Completion:
        self.push(answer)
        return super().execute(request)


def facts_model() -> FactsModel:
    return FactsModel()


class SlowFactsModel(FactsModel):
    """:class:`FactsModel` taking a few milliseconds per call, like a (very fast) real model.

    For tests that must interrupt a run part-way (kill and resume): without a delay a
    whole evaluation is over before a signal can land in it.
    """

    delay = 0.004

    def execute(self, request: CompletionRequest) -> Completion:
        import time

        time.sleep(self.delay)
        return super().execute(request)


def slow_facts_model() -> SlowFactsModel:
    return SlowFactsModel()
