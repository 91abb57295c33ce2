"""A scripted stand-in for a language model, for deterministic unit tests.

The planner's logic (prompting, parsing, checking replies against the
crafting graph, retrying, falling back) must be testable without a 100 MB
model and without nondeterminism.  :class:`ScriptedLLM` replays a fixed queue
of replies and records every request, so a test can both drive the planner
down a chosen path and assert what the planner asked for.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace

from .base import Completion, CompletionRequest, LLMBackend, LLMOptions, validate_messages

__all__ = ["RecordedCall", "ScriptExhaustedError", "ScriptedLLM"]

Reply = (
    str
    | Completion
    | BaseException
    | type[BaseException]
    | Callable[["RecordedCall"], str | Completion]
    | dict  # {continuation: logprob}, for continuation_logprobs
)


class ScriptExhaustedError(RuntimeError):
    """The code under test asked for more replies than the test scripted.

    Deliberately *not* an ``LLMError``: planner code that catches ``LLMError``
    to fall back must not hide a test whose script is too short.
    """


#: one request as the backend received it (messages deep-copied): the resolved request itself
RecordedCall = CompletionRequest


class ScriptedLLM(LLMBackend):
    """Backend that answers from a queue of scripted replies.

    Each queued reply is one of: a string (returned as the completion text),
    a :class:`Completion` (returned as is), an exception instance or class
    (raised, e.g. ``BackendTimeoutError`` to test retry paths), or a callable
    taking the :class:`RecordedCall` and returning a string or Completion
    (for replies that depend on the prompt).  Arguments are validated like a
    real backend, so malformed requests fail in unit tests too.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        options: LLMOptions | None = None,
        *,
        probabilities: bool = False,
        metadata: dict[str, str] | None = None,
    ) -> None:
        """``probabilities``: say it gives token probabilities (scripted dicts), as the in-process model does;
        ``metadata``: what :meth:`model_metadata` answers, as a model file's keys would."""
        super().__init__(options)
        self.gives_probabilities = probabilities
        self._metadata = dict(metadata or {})
        self._queue: deque[Reply] = deque(replies)
        self.calls: list[RecordedCall] = []

    def model_metadata(self, key: str) -> str | None:
        return self._metadata.get(key)

    def push(self, *replies: Reply) -> None:
        """Append more replies to the end of the queue."""
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        """Replies not yet consumed (assert ``== 0`` to check a script was fully used)."""
        return len(self._queue)

    def _next(self, call: RecordedCall):
        """Record ``call`` and take the next scripted reply: raised if it is an exception, called if callable."""
        self.calls.append(call)
        if not self._queue:
            preview = call.last_user_message[:120]
            raise ScriptExhaustedError(
                f"ScriptedLLM has no reply left for call #{len(self.calls)} "
                f"(last user message: {preview!r}); the test scripted "
                f"{len(self.calls) - 1} replies. Add more replies or check why the code "
                "under test made an extra call."
            )
        reply = self._queue.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, type) and issubclass(reply, BaseException):
            raise reply(f"scripted {reply.__name__} for call #{len(self.calls)}")
        return reply(call) if callable(reply) else reply

    def continuation_logprobs(self, messages: list[dict[str, str]], continuations: list[str]) -> list[float]:
        """Answer a probability call from the queue: the next reply must be a dict {continuation: logprob} (or a
        callable returning one, or an exception); continuations it does not name get -30 (about 1e-13)."""
        validate_messages(messages)
        call = RecordedCall(
            messages=copy.deepcopy(messages),
            max_tokens=0,
            temperature=0.0,
            seed=0,
            json_schema=None,
            grammar=None,
            stop=list(continuations),
        )
        reply = self._next(call)
        if not isinstance(reply, dict):
            raise TypeError(f"a probability call needs a scripted dict {{text: logprob}}, got {reply!r}")
        return [float(reply.get(text, -30.0)) for text in continuations]

    def execute(self, request: CompletionRequest) -> Completion:
        """Record the request, then return (or raise) the next scripted reply."""
        call = replace(
            request,
            messages=copy.deepcopy(request.messages),
            json_schema=copy.deepcopy(request.json_schema),
            stop=list(request.stop) if request.stop else None,
        )
        reply = self._next(call)
        if isinstance(reply, Completion):
            return reply
        if not isinstance(reply, str):
            raise TypeError(f"scripted reply must be str, Completion or exception, got {reply!r}")
        return Completion(
            text=reply,
            prompt_tokens=sum(len(m["content"].split()) for m in request.messages),
            completion_tokens=len(reply.split()),
            finish_reason="stop",
            model="scripted",
        )
