"""One short, grammar-bound model call at a time, for state consistency's model side.

The step scorer (a number 1-10 per step) and the forward repairer (one of a
few listed steps) ask many small questions of the same backend. Both need the
same things around each call, kept here once:

- **what it cost**, in the shared :class:`LLMUse` counters (calls, tokens,
  seconds, unreadable replies, errors);
- **backend health**: after ``max_failures`` failures in a row the backend is
  considered down and no further call is made (a dead server costs two
  timeouts, not one per step);
- **the call log**: every call with its verdict (readable or not) goes to the
  same SQLite log as the decomposer's (``barsym logs``); a log that fails is
  switched off with one warning and never stops a repair.
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..llm import LLMBackend, LLMError
from .call_log import CallLog, Verdict, open_log

__all__ = ["LLMUse", "ShortCalls"]


@dataclass
class LLMUse:
    """What the model cost: calls, tokens, time, failures (scoring and repair alike)."""

    calls: int = 0
    forced: int = 0  # choices with a single option, taken without a call
    prompt_tokens: int = 0
    evaluated_prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0
    unreadable: int = 0
    replayed_calls: int = 0  # scores served from the cache: the calls a run of its own would make
    replayed_seconds: float = 0.0  # ... and the time they took when they were made
    problems: list[str] = field(default_factory=list)

    def record(self, reply, started: float) -> None:
        self.calls += 1
        self.seconds += time.perf_counter() - started
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        evaluated = reply.evaluated_prompt_tokens
        self.evaluated_prompt_tokens += reply.prompt_tokens if evaluated is None else evaluated
        self.cached_prompt_tokens += reply.cached_prompt_tokens or 0

    def add(self, other: "LLMUse") -> None:
        for name, value in asdict(other).items():
            if name == "problems":
                self.problems.extend(other.problems)
            else:
                setattr(self, name, getattr(self, name) + value)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["replayed_seconds"] = round(self.replayed_seconds, 3)
        out["problems"] = list(dict.fromkeys(self.problems))[:3]
        return out


class ShortCalls:
    """A backend behind failure counting, :class:`LLMUse` and the call log."""

    def __init__(
        self,
        backend: LLMBackend,
        use: LLMUse,
        *,
        seed: int = 0,
        temperature: float = 0.0,
        max_failures: int = 2,
        log: CallLog | bool | None = True,
    ):
        """``log``: True for the default call log (opened at the first call), False/None for none."""
        self.backend, self.use, self.seed, self.temperature = backend, use, seed, temperature
        self.max_failures = max_failures
        self.down: str | None = None  # why the backend is considered down
        self.last_error: LLMError | None = None  # the last failure, for a caller that must stop on it (parse)
        self._failures = 0
        self._log: CallLog | None = None if log is True else (log or None)
        self._open_log = log is True

    def ask(
        self, messages: list[dict[str, str]], grammar: str, max_tokens: int, about: str, readable: Callable[[str], bool]
    ) -> str | None:
        """The stripped reply, or None when the backend failed, is down, or the reply is not ``readable``."""
        if self.down:
            return None
        started = time.perf_counter()
        try:
            reply = self.backend.complete(
                messages, grammar=grammar, max_tokens=max_tokens, temperature=self.temperature, seed=self.seed
            )
        except LLMError as exc:
            self._failed(exc, about, messages, grammar, started)
            return None
        self._failures = 0
        self.use.record(reply, started)
        text = reply.text.strip()
        ok = readable(text)
        if not ok:
            self.use.unreadable += 1
        self._write(
            about,
            messages,
            grammar,
            reply,
            Verdict.ACCEPTED if ok else Verdict.UNREADABLE,
            [],
            time.perf_counter() - started,
        )
        return text if ok else None

    def weigh(self, messages: list[dict[str, str]], continuations: list[str], about: str) -> list[float] | None:
        """The log-probability of each continuation (the backend's :meth:`continuation_logprobs`), or None
        when the backend failed or is down; counted and logged like :meth:`ask`."""
        if self.down:
            return None
        started = time.perf_counter()
        try:
            found = self.backend.continuation_logprobs(messages, continuations)
        except LLMError as exc:
            self._failed(exc, about, messages, _asked(continuations), started)
            return None
        self._failures = 0
        self.use.calls += 1
        self.use.seconds += time.perf_counter() - started
        shown = " ".join(f"{text!r}:{value:.3f}" for text, value in zip(continuations, found))
        self._write(
            about, messages, _asked(continuations), _Weighed(shown), Verdict.ACCEPTED, [], time.perf_counter() - started
        )
        return list(found)

    def _failed(self, exc: LLMError, about: str, messages, grammar: str, started: float) -> None:
        """Count a backend failure (``max_failures`` in a row: the backend is down) and log it."""
        self.use.errors += 1
        self.use.problems.append(str(exc))
        self.last_error = exc
        self._failures += 1
        if self._failures >= self.max_failures:
            self.down = f"{self._failures} failures in a row, last: {exc}"
        self._write(about, messages, grammar, None, Verdict.BACKEND_ERROR, [str(exc)], time.perf_counter() - started)

    def _write(
        self, about: str, messages, grammar: str, reply, verdict: Verdict, problems: list[str], seconds: float
    ) -> None:
        if self._open_log:
            self._open_log = False
            self._log = open_log()
        if self._log is None:
            return
        try:
            self._log.record(
                goal=about,
                attempt=1,
                messages=messages,
                prefix=0,
                grammar=grammar,
                reply=reply.text if reply is not None else None,
                verdict=verdict,
                problems=problems,
                seconds=seconds,
                temperature=self.temperature,
                prompt_tokens=reply.prompt_tokens if reply is not None else None,
                evaluated_tokens=reply.evaluated_prompt_tokens if reply is not None else None,
                completion_tokens=reply.completion_tokens if reply is not None else None,
                evaluations=reply.evaluations if reply is not None else None,
            )
        except (sqlite3.Error, OSError) as exc:
            warnings.warn(f"stopped logging LLM calls to {self._log.path}: {exc}", stacklevel=3)
            self._log = None


def _asked(continuations: list[str]) -> str:
    """What a probability call asked, in the call log's grammar column."""
    return "log-probabilities of: " + " | ".join(repr(text) for text in continuations)


class _Weighed:
    """A probability call's answer in the shape the call log reads from a completion."""

    prompt_tokens = evaluated_prompt_tokens = completion_tokens = evaluations = None

    def __init__(self, text: str):
        self.text = text
