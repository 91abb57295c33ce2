"""The one gateway to the model: every call of every planner, scorer, repairer and ``barsym parse`` goes through here.

Callers decide *what* to ask and what to make of the answer; the gateway does
the rest, the same way for every call (:class:`ModelGateway`):

- **one way to the backend**: :meth:`ModelGateway.call` (a completion under a
  grammar) and :meth:`ModelGateway.weigh` (the log-probabilities of a few
  continuations) are the only places a backend is asked anything; both go
  through one timed, counted step;
- **counters**: calls, tokens, evaluations, seconds, backend errors and
  unreadable replies go into one :class:`~barsym.planner.stats.LLMStats` (a
  plan's, or a scorer's, repairer's or parse's own);
- **the prefix**: before a plan's first call the backend is primed with the
  fixed few-shot prefix (loaded from disk, or evaluated once and saved), so
  each call evaluates only what follows it (a gateway without a prefix has
  nothing to prime);
- **greedy replies are reused** within a plan: identical prompt and grammar at
  temperature 0 give the identical reply, so only the call is saved (the short
  calls below are never reused: each is its own question);
- **backend health**: after ``max_failures`` failures in a row the backend is
  considered down for the rest of the process (a dead server costs two
  timeouts, not one per goal); a failure no fallback may hide
  (:class:`~barsym.llm.FatalBackendError`: refused credentials, a URL that is not
  the API, a model computing NaN) is raised again, and the command stops on it;
- **the call log**: each real call is written with its verdict (:mod:`.call_log`),
  by the planners once they know it (:meth:`ModelGateway.record`), by the short
  calls at once; a log that fails is switched off with one warning.

The short calls -- :meth:`ModelGateway.ask` (one grammar-bound reply, checked by
the caller's ``readable``) and :meth:`ModelGateway.weigh` -- are what the step
scorer, the forward repairer and the prose parser use: they count a failure,
log the call with its verdict and give None instead of raising.
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ...llm import Completion, FatalBackendError, LLMBackend, LLMError
from ...llm.time_limit import reply_deadline
from ...planner.stats import LLMStats
from .call_log import CallLog, Verdict, command_line, open_log
from .progress import Phase, Progress, ProgressEvent

if TYPE_CHECKING:
    from ..grammars.forward_plans import ReadPlan

__all__ = ["Asked", "ModelGateway"]

CUT_OFF = " [cut off at max_tokens]"
_Result = TypeVar("_Result")


@dataclass(frozen=True)
class Asked:
    """A reply and how it was obtained (``completion`` is None for a reused reply)."""

    text: str
    completion: Completion | None
    seconds: float

    @property
    def reused(self) -> bool:
        return self.completion is None


class ModelGateway:
    """A backend behind the counters, the failure count, the prefix, the reuse of greedy replies and the call log.

    ``log``: an open :class:`CallLog`, True for the default one (opened at the first call written), or None/False
    for none. ``stats``: the counters to fill (a new :class:`LLMStats` if not given; :meth:`start_plan` swaps them).
    ``temperature`` is the short calls' (:meth:`ask`, :meth:`weigh`); a planner gives each :meth:`call` its own.
    """

    def __init__(
        self,
        backend: LLMBackend,
        prefix: tuple[dict[str, str], ...] = (),
        *,
        seed: int = 0,
        temperature: float = 0.0,
        max_tokens: int = 256,
        max_failures: int = 2,
        log: CallLog | bool | None = None,
        progress: Progress | None = None,
        stats: LLMStats | None = None,
    ):
        self.backend, self.prefix, self.seed, self.max_tokens = backend, prefix, seed, max_tokens
        self.temperature, self.max_failures, self.progress = temperature, max_failures, progress
        self.log: CallLog | None = None if log is True else (log or None)
        self._open_log = log is True  # the default log, opened when the first call is written
        self.down: str | None = None  # why the backend is considered down (for the whole process)
        self.last_error: LLMError | None = None  # the last failure, for a caller that must stop on it (parse)
        self._failures_in_row = 0
        self.start_plan(stats if stats is not None else LLMStats())

    def start_plan(self, stats: LLMStats) -> None:
        self.stats = stats
        self._replies: dict[tuple, str] = {}
        self._primed = False

    # ---- the one way to the backend ---------------------------------------------------------
    def _execute(self, request: Callable[[], _Result]) -> _Result:
        """Make one backend request, counted as a call with its time (LLMError passes through, counted as a call)."""
        started = time.perf_counter()
        self.stats.llm_calls += 1
        try:
            result = request()
        finally:
            self.stats.llm_seconds += time.perf_counter() - started
        self._failures_in_row = 0
        return result

    def call(
        self,
        messages: list[dict[str, str]],
        grammar: str,
        temperature: float,
        max_tokens: int | None = None,
        until: float | None = None,
        *,
        reuse: bool = True,
    ) -> Asked:
        """The model's reply; LLMError from the backend after counting it (see :meth:`failed`).

        ``max_tokens`` caps this call below the gateway's usual cap and ``until`` (a :func:`time.monotonic` time)
        ends an in-process reply when it passes (a deadline near: :mod:`.loop_limits`, :mod:`barsym.llm.time_limit`).
        ``reuse`` False asks the backend even for a greedy prompt this plan asked before.
        """
        tokens = self.max_tokens if max_tokens is None else min(max_tokens, self.max_tokens)
        key = None
        if temperature == 0 and reuse:
            key = (tuple((m["role"], m["content"]) for m in messages), grammar, tokens)
            if key in self._replies:
                self.stats.reused_replies += 1
                return Asked(self._replies[key], None, 0.0)
        self.prime()
        started = time.perf_counter()

        def complete() -> Completion:
            with reply_deadline(until):
                return self.backend.complete(
                    messages, grammar=grammar, max_tokens=tokens, temperature=temperature, seed=self.seed
                )

        reply = self._execute(complete)
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
        if self._primed or not self.prefix:
            return
        self._primed = True
        if self.progress is not None:
            self.progress(ProgressEvent(Phase.PRIMING, "preparing the model's few-shot prompt"))
        try:
            primed = self.backend.prime(list(self.prefix))
        except FatalBackendError:
            raise  # no fallback from it (failed())
        except LLMError as exc:  # the first call will meet the same problem and count it
            self.stats.problems.append(str(exc))
            return
        if primed is not None:
            self.stats.prefix = primed.source
            self.stats.prefix_seconds += primed.seconds
            self.stats.llm_seconds += primed.seconds

    def failed(self, exc: LLMError) -> bool:
        """Record a backend failure; True when the backend is now considered down.

        A :class:`~barsym.llm.FatalBackendError` (refused credentials, a URL that is not the API, a model
        computing NaN) is counted and raised again from here: every caller that would fall back from a
        failure records it through this method first, so none can go on without the model under its name."""
        self.stats.backend_errors += 1
        self.stats.problems.append(str(exc))
        self.last_error = exc
        if isinstance(exc, FatalBackendError):
            self.down = str(exc)
            raise exc
        self._failures_in_row += 1
        if self._failures_in_row >= self.max_failures:
            self.down = f"{self._failures_in_row} failures in a row, last: {exc}"
            return True
        return False

    # ---- short calls: counted, logged, None instead of an error ------------------------------
    def ask(
        self, messages: list[dict[str, str]], grammar: str, max_tokens: int, about: str, readable: Callable[[str], bool]
    ) -> str | None:
        """The stripped reply, or None when the backend failed, is down, or the reply is not ``readable``.

        Never reused, logged at once as goal ``about`` (accepted, unreadable or a backend error)."""
        if self.down:
            return None
        started = time.perf_counter()
        try:
            asked = self.call(messages, grammar, self.temperature, max_tokens, reuse=False)
        except LLMError as exc:
            self._short_failed(exc, about, messages, grammar, started)
            return None
        assert asked.completion is not None  # never reused
        raw = asked.completion.text  # as the backend gave it: a short reply is read as it is, cut off or not
        text = raw.strip()
        ok = readable(text)
        if not ok:
            self.stats.unreadable += 1
        verdict = Verdict.ACCEPTED if ok else Verdict.UNREADABLE
        seconds = time.perf_counter() - started
        self._log_call(about, 1, messages, grammar, raw, asked.completion, verdict, [], seconds, self.temperature)
        return text if ok else None

    def weigh(self, messages: list[dict[str, str]], continuations: list[str], about: str) -> list[float] | None:
        """The log-probability of each continuation (the backend's ``continuation_logprobs``), or None when the
        backend failed or is down; counted and logged like :meth:`ask`."""
        if self.down:
            return None
        started = time.perf_counter()
        asked_for = _asked(continuations)
        try:
            found = self._execute(lambda: self.backend.continuation_logprobs(messages, continuations))
        except LLMError as exc:
            self._short_failed(exc, about, messages, asked_for, started)
            return None
        shown = " ".join(f"{text!r}:{value:.3f}" for text, value in zip(continuations, found))
        seconds = time.perf_counter() - started
        self._log_call(about, 1, messages, asked_for, shown, None, Verdict.ACCEPTED, [], seconds, self.temperature)
        return list(found)

    def _short_failed(self, exc: LLMError, about: str, messages, grammar: str, started: float) -> None:
        """Count a short call's backend failure (:meth:`failed`) and log it."""
        self.failed(exc)
        seconds = time.perf_counter() - started
        self.record(about, 1, messages, grammar, None, Verdict.BACKEND_ERROR, [str(exc)], self.temperature, seconds)

    # ---- the log -----------------------------------------------------------------------
    def start_run(self, command: str, planner: str, goal: str) -> None:
        """A run in the log for the calls that follow (a plan's): the command, planner, goal and model."""
        self._write(lambda log: log.start_run(command, planner, goal, self._model_text()), in_run=False)

    def _model_text(self) -> str | None:
        """The backend's model as the call log names it: its files and their SHA-256, or the server, or the
        stand-in (:mod:`barsym.llm.provenance`); a backend that names none (a scripted fake) by its ``model``."""
        from ...llm.provenance import backend_record, record_text

        record = backend_record(self.backend)
        if record is not None:
            return record_text(record)
        model = getattr(self.backend, "model", None)
        return str(model) if model else None

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
        if asked is not None and asked.reused:
            return
        text, reply = (asked.text, asked.completion) if asked is not None else (None, None)
        spent = asked.seconds if asked is not None else seconds
        self._log_call(goal, attempt, messages, grammar, text, reply, verdict, problems, spent, temperature)

    def _log_call(
        self,
        goal: str,
        attempt: int,
        messages: list[dict[str, str]],
        grammar: str,
        text: str | None,
        reply: Completion | None,
        verdict: Verdict,
        problems: list[str],
        seconds: float,
        temperature: float,
    ) -> None:
        """One row of the call log: the reply's text and, when there was a completion, its token counts."""
        prefix = len(self.prefix) if self.prefix and messages[: len(self.prefix)] == list(self.prefix) else 0
        self._write(
            lambda log: log.record(
                goal=goal,
                attempt=attempt,
                messages=messages,
                prefix=prefix,
                grammar=grammar,
                reply=text,
                verdict=verdict,
                problems=list(problems),
                seconds=seconds,
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
        read: "ReadPlan",
        temperature: float,
    ) -> None:
        """Log a forward planner's plan reply: accepted when ``read`` has steps, else unreadable."""
        verdict = Verdict.ACCEPTED if read.steps else Verdict.UNREADABLE
        self.record(goal, attempt, messages, grammar, asked, verdict, list(read.unreadable), temperature)

    def _write(self, action, in_run: bool = True) -> None:
        """``action(log)`` on the open log; ``in_run``: a call, written into a run (one of its own if none started)."""
        if self._open_log:
            self._open_log = False
            self.log = open_log()
        if self.log is None:
            return
        try:
            if in_run and self.log.run is None:  # a short call outside a plan (score, repair, parse): its own run
                self.log.start_run(command_line() or "", "", "", self._model_text())
            action(self.log)
        except (sqlite3.Error, OSError) as exc:
            warnings.warn(f"stopped logging LLM calls to {self.log.path}: {exc}", stacklevel=3)
            self.log = None


def _asked(continuations: list[str]) -> str:
    """What a probability call asked, in the call log's grammar column."""
    return "log-probabilities of: " + " | ".join(repr(text) for text in continuations)
