"""A wall-clock limit on the reply being generated: the in-process decoders stop writing when it passes.

Why: a planner's deadline (``--deadline``, :mod:`barsym.reasoning.loop_limits`) that is checked only between
calls is overrun by the call in progress, and on a busy 2-core machine one looping reply of a few hundred
tokens takes minutes. The limit travels in a context variable, not as an argument of ``complete``, so every
backend keeps its signature: the caller sets it around a call (:func:`reply_deadline`), and the decoding loops
(:mod:`.llamacpp.token_decoder`, :mod:`.llamacpp.span_decoder`, the stand-ins) ask :func:`out_of_time` before each token and end
the reply as if it reached ``max_tokens`` (``finish_reason="length"``). A server cannot be stopped mid-reply;
its calls are bounded by ``max_tokens`` and ``--llm-timeout``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["out_of_time", "reply_deadline"]

_until: ContextVar[float | None] = ContextVar("barsym_reply_until", default=None)


@contextlib.contextmanager
def reply_deadline(until: float | None) -> Iterator[None]:
    """Replies generated inside stop at ``until`` (a :func:`time.monotonic` time; None: no limit)."""
    token = _until.set(until)
    try:
        yield
    finally:
        _until.reset(token)


def out_of_time() -> bool:
    """True once the current reply's limit has passed."""
    until = _until.get()
    return until is not None and time.monotonic() >= until
