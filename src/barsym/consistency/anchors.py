"""Anchor pairs: where forward repair regenerates a plan, and where it must land.

A pair ``(start, end)`` of 1-based step numbers says: from the state before
step ``start``, generate steps forward so that step ``end`` and everything
after it can run. Steps ``start .. end-1`` are the *window* that is
regenerated; ``end`` is kept. ``end = n + 1`` means "the end of the plan",
whose target is the goal.

Two ways to choose pairs (BAR, module b):

- **step scoring**: every step scored below ``t`` starts a pair, and the
  ``k``-th step after it ends it (the paper: ``t = 5``, ``k = 3``);
- **sliding window**: pairs spanning ``k`` steps at an interval of ``k``
  steps (a window, then ``k`` kept steps, then a window, ...) from a random
  offset in ``1..k``, drawn from ``Random((seed, round))``: reproducible, and
  different in every repair round, so the windows slide over the plan. The
  interval keeps pairs from touching; touching pairs would merge into one
  window over the whole plan. The window never looks at the plan, which is
  why the paper finds it noisier than step scoring.

Pairs that overlap or touch (one's end anchor is the other's start) are merged
into one window before repair, since a step cannot be both kept as an end
anchor and regenerated.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

# the methods' names and defaults (AnchorMethod, ScoreSource, ScoreMethod, t, k) live in config.py, which a
# command's options read without loading the anchor choosers
from .config import DEFAULT_T

#: the GGUF metadata key a model declares its step-score method under (``barsym distill`` writes the
#: method it taught; a distilled scorer is read the way it was taught, by default)
SCORE_METHOD_KEY = "barsym.step_score_method"


@dataclass(frozen=True, order=True)
class AnchorPair:
    start: int  # first regenerated step (1-based)
    end: int  # first kept step after the window; n + 1 = the end of the plan (the goal)

    def as_list(self) -> list[int]:
        return [self.start, self.end]

    def covers(self, step: int) -> bool:
        return self.start <= step < self.end


def step_scoring(scores: Sequence[int], t: int = DEFAULT_T, k: int = 3) -> list[AnchorPair]:
    """A pair ``(i, min(i + k, n + 1))`` for every step ``i`` scored below ``t``."""
    _check(t, k)
    n = len(scores)
    return [AnchorPair(i, min(i + k, n + 1)) for i, score in enumerate(scores, start=1) if score < t]


def sliding_window(n: int, k: int = 3, seed: int = 0, round_number: int = 1) -> list[AnchorPair]:
    """Pairs of ``k`` steps, ``k`` steps apart, from a seeded random offset (see the module docstring)."""
    _check(DEFAULT_T, k)
    if n <= 0:
        return []
    offset = random.Random(f"{seed}:{round_number}").randint(1, k)
    return [AnchorPair(s, min(s + k, n + 1)) for s in range(min(offset, n), n + 1, 2 * k)]


def merge(pairs: Sequence[AnchorPair]) -> list[AnchorPair]:
    """Overlapping or touching pairs as one window each, in plan order."""
    windows: list[AnchorPair] = []
    for pair in sorted(pairs):
        if windows and pair.start <= windows[-1].end:
            last = windows[-1]
            windows[-1] = AnchorPair(last.start, max(last.end, pair.end))
        else:
            windows.append(pair)
    return windows


def _check(t: int, k: int) -> None:
    if not 1 <= t <= 10:
        raise ValueError(f"t must be from 1 to 10, got {t}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
