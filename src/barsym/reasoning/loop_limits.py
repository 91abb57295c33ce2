"""When the forward planners (DEPS, chain of thought) stop: a deadline, a repeated step run, a round that changes nothing.

Why: a small model at temperature 0 falls into loops. DEPS once wrote ``craft 1
stone_bricks`` 29 times in one plan and replanned five times to the same end, 347 s
for one task on a 2-core machine; nothing in its loop noticed. What is here lets
both planners stop early, and say why:

- a **deadline** (seconds per plan, :data:`DEFAULT_DEADLINE` unless set): no new
  call starts after it, each call's reply is capped to the tokens the model can
  write in the time left at the rate measured so far, and an in-process reply
  still being written when it passes ends there (:mod:`barsym.llm.time_limit`);
- a **repeated step run**: the same step (not a move) :data:`REPEAT_RUN` or more
  times in a row. No expert plan of BAR's repeats a step at once (two equal steps
  are one with the sum of their counts), and at temperature 0 the model that
  loops once loops again, so DEPS stops replanning;
- a **round that changes nothing**: a replanned plan equal to an earlier round's
  runs the same way again (the world is seeded per round, but the plan is the
  model's whole answer).

The clock is a parameter so tests drive it with a fake model, never a timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..model import Step
from ..planner.stats import LLMStats

__all__ = ["BASELINE_DEADLINE", "DEFAULT_DEADLINE", "MIN_TOKENS", "REPEAT_RUN", "Deadline", "repeated_run"]

#: seconds a deps or cot plan may take by default: DEPS' five rounds fit when the model answers well, and a
#: model that loops is cut off well within a minute on a busy 2-core machine
DEFAULT_DEADLINE = 45.0
#: seconds a plan of the four added baselines may take by default (reverse-chain, self-refine, tot,
#: plan-and-solve): their loops ask more (tot: a proposal and a rating per kept branch and depth), so a model
#: that answers well is given more time; one that loops to every reply's length limit is still cut off
BASELINE_DEADLINE = 120.0
REPEAT_RUN = 3
MIN_TOKENS = 16  # a call that may not write even a step or two is not started
SAFETY = 0.8  # the share of the time left that a capped reply may take at the measured rate


class Deadline:
    """The time one plan may still take; ``seconds`` None means no deadline."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.started = clock()

    def left(self) -> float:
        """Seconds left (infinite without a deadline)."""
        if self.seconds is None:
            return float("inf")
        return self.seconds - (self.clock() - self.started)

    @property
    def passed(self) -> bool:
        return self.left() <= 0

    def tokens(self, cap: int, stats: LLMStats) -> int:
        """The most reply tokens a call may ask for now: ``cap``, or fewer where this plan's measured rate
        (completion tokens per second of model time, prompts included) says the rest would not fit; 0 when
        even :data:`MIN_TOKENS` do not.

        The rate leaves out the few-shot prefix's evaluation (``prefix_seconds``: once per process, not
        per reply), and fewer than :data:`MIN_TOKENS` written is no rate at all: a first call on a busy
        machine that spent its time on the prefix and wrote one token must not make every later plan
        skip its call (the reply's own deadline, :meth:`until`, still bounds what the call takes)."""
        left = self.left()
        if left <= 0:
            return 0
        seconds = stats.llm_seconds - stats.prefix_seconds
        if left == float("inf") or stats.completion_tokens < MIN_TOKENS or seconds <= 0:
            return cap
        rate = stats.completion_tokens / seconds
        fits = int(left * SAFETY * rate)
        return min(cap, fits) if fits >= MIN_TOKENS else 0

    def until(self) -> float | None:
        """When the reply being asked for must end, on :func:`time.monotonic`'s clock (for
        :func:`barsym.llm.time_limit.reply_deadline`); None without a deadline."""
        left = self.left()
        return None if left == float("inf") else time.monotonic() + left

    def describe(self) -> str:
        return f"the deadline of {self.seconds:g} s passed"


def repeated_run(steps: Sequence[Step]) -> tuple[Step, int] | None:
    """The longest run of one step written :data:`REPEAT_RUN` or more times in a row (moves excepted), or None."""
    best: tuple[Step, int] | None = None
    run = 0
    for i, step in enumerate(steps):
        run = run + 1 if i and step == steps[i - 1] and not step.type.moves else 1
        if run >= REPEAT_RUN and (best is None or run > best[1]):
            best = (step, run)
    return best
