"""The LLM decomposer's line to the model: one place for everything around a call.

The decomposer decides *what* to ask and whether the answer is right; this
class does the rest, the same way for every call:

- **the prefix**: before a plan's first call the backend is primed with the
  fixed few-shot prefix (loaded from disk, or evaluated once and saved), so
  each call evaluates only what follows it;
- **greedy replies are reused** within a plan: identical prompt and grammar at
  temperature 0 give the identical reply, so only the call is saved;
- **counters**: tokens, evaluations and seconds go into the plan's
  :class:`~barsym.planner.stats.LLMStats`;
- **backend health**: after ``max_failures`` failures in a row the backend is
  considered down for the rest of the process (a dead server costs two
  timeouts, not one per goal);
- **the call log**: each real call is written with its verdict once the
  decomposer knows it (:mod:`.call_log`); a log that fails is switched off
  with one warning.
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from dataclasses import dataclass

from ..llm import Completion, LLMBackend, LLMError
from ..llm.time_limit import reply_deadline
from ..planner.stats import LLMStats
from .call_log import CallLog, Verdict
from .forward_plans import ReadPlan
from .progress import Phase, Progress, ProgressEvent

__all__ = ["Asked", "ModelCaller"]

CUT_OFF = " [cut off at max_tokens]"


@dataclass(frozen=True)
class Asked:
    """A reply and how it was obtained (``completion`` is None for a reused reply)."""

    text: str
    completion: Completion | None
    seconds: float

    @property
    def reused(self) -> bool:
        return self.completion is None


class ModelCaller:
    def __init__(
        self,
        backend: LLMBackend,
        prefix: tuple[dict[str, str], ...],
        *,
        seed: int = 0,
        max_tokens: int = 256,
        max_failures: int = 2,
        log: CallLog | None = None,
        progress: Progress | None = None,
    ):
        self.backend, self.prefix, self.seed, self.max_tokens = backend, prefix, seed, max_tokens
        self.max_failures, self.log, self.progress = max_failures, log, progress
        self.down: str | None = None  # why the backend is considered down (for the whole process)
        self._failures_in_row = 0
        self.start_plan(LLMStats())

    def start_plan(self, stats: LLMStats) -> None:
        self.stats = stats
        self._replies: dict[tuple, str] = {}
        self._primed = False

    # ---- calls -------------------------------------------------------------------------
    def ask(
        self,
        messages: list[dict[str, str]],
        grammar: str,
        temperature: float,
        max_tokens: int | None = None,
        until: float | None = None,
    ) -> Asked:
        """The model's reply; LLMError from the backend after counting it (see :meth:`failed`).

        ``max_tokens`` caps this call below the caller's usual cap and ``until`` (a :func:`time.monotonic` time)
        ends an in-process reply when it passes (a deadline near: :mod:`.loop_limits`, :mod:`barsym.llm.time_limit`).
        """
        tokens = self.max_tokens if max_tokens is None else min(max_tokens, self.max_tokens)
        key = None
        if temperature == 0:
            key = (tuple((m["role"], m["content"]) for m in messages), grammar, tokens)
            if key in self._replies:
                self.stats.reused_replies += 1
                return Asked(self._replies[key], None, 0.0)
        self.prime()
        started = time.perf_counter()
        self.stats.llm_calls += 1
        try:
            with reply_deadline(until):
                reply = self.backend.complete(
                    messages, grammar=grammar, max_tokens=tokens, temperature=temperature, seed=self.seed
                )
        finally:
            self.stats.llm_seconds += time.perf_counter() - started
        self._failures_in_row = 0
        s = self.stats
        s.prompt_tokens += reply.prompt_tokens
        s.completion_tokens += reply.completion_tokens
        s.evaluated_prompt_tokens += (
            reply.evaluated_prompt_tokens if reply.evaluated_prompt_tokens is not None else reply.prompt_tokens
        )
        s.cached_prompt_tokens += reply.cached_prompt_tokens or 0
        s.evaluations += reply.evaluations if reply.evaluations is not None else reply.completion_tokens + 1
        s.drafted_tokens += reply.drafted_tokens
        text = reply.text if reply.finish_reason != "length" else reply.text + CUT_OFF
        if key is not None:
            self._replies[key] = text
        return Asked(text, reply, time.perf_counter() - started)

    def prime(self) -> None:
        """Make the backend ready for this plan's calls (once per plan; the planner calls it up front)."""
        if self._primed:
            return
        self._primed = True
        if self.progress is not None:
            self.progress(ProgressEvent(Phase.PRIMING, "preparing the model's few-shot prompt"))
        try:
            primed = self.backend.prime(list(self.prefix))
        except LLMError as exc:  # the first call will meet the same problem and count it
            self.stats.problems.append(str(exc))
            return
        if primed is not None:
            self.stats.prefix = primed.source
            self.stats.prefix_seconds += primed.seconds
            self.stats.llm_seconds += primed.seconds

    def failed(self, exc: LLMError) -> bool:
        """Record a backend failure; True when the backend is now considered down."""
        self.stats.backend_errors += 1
        self.stats.problems.append(str(exc))
        self._failures_in_row += 1
        if self._failures_in_row >= self.max_failures:
            self.down = f"{self._failures_in_row} failures in a row, last: {exc}"
            return True
        return False

    # ---- the log -----------------------------------------------------------------------
    def start_run(self, command: str, planner: str, goal: str) -> None:
        model = getattr(getattr(self.backend, "model_path", None), "name", None) or getattr(self.backend, "model", None)
        self._write(lambda log: log.start_run(command, planner, goal, str(model) if model else None))

    def record(
        self,
        goal: str,
        attempt: int,
        messages: list[dict[str, str]],
        grammar: str,
        asked: Asked | None,
        verdict: Verdict,
        problems: list[str],
        temperature: float,
        seconds: float = 0.0,
    ) -> None:
        """Log one real call (reused replies are not calls and are not logged)."""
        if self.log is None or (asked is not None and asked.reused):
            return
        reply = asked.completion if asked is not None else None
        prefix = len(self.prefix) if messages[: len(self.prefix)] == list(self.prefix) else 0
        self._write(
            lambda log: log.record(
                goal=goal,
                attempt=attempt,
                messages=messages,
                prefix=prefix,
                grammar=grammar,
                reply=asked.text if asked is not None else None,
                verdict=verdict,
                problems=list(problems),
                seconds=asked.seconds if asked is not None else seconds,
                temperature=temperature,
                prompt_tokens=reply.prompt_tokens if reply else None,
                evaluated_tokens=reply.evaluated_prompt_tokens if reply else None,
                completion_tokens=reply.completion_tokens if reply else None,
                evaluations=reply.evaluations if reply else None,
            )
        )

    def record_plan(
        self,
        goal: str,
        attempt: int,
        messages: list[dict[str, str]],
        grammar: str,
        asked: Asked,
        read: ReadPlan,
        temperature: float,
    ) -> None:
        """Log a forward planner's plan reply: accepted when ``read`` has steps, else unreadable."""
        verdict = Verdict.ACCEPTED if read.steps else Verdict.UNREADABLE
        self.record(goal, attempt, messages, grammar, asked, verdict, list(read.unreadable), temperature)

    def _write(self, action) -> None:
        if self.log is None:
            return
        try:
            action(self.log)
        except (sqlite3.Error, OSError) as exc:
            warnings.warn(f"stopped logging LLM calls to {self.log.path}: {exc}", stacklevel=3)
            self.log = None
