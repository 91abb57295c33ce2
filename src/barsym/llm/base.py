"""Backend-neutral interface for the planner's language model.

The planner only needs "send chat messages, get text back, optionally under a
grammar", so every backend (in-process llama.cpp, an OpenAI-compatible HTTP
server, a scripted fake for tests) implements the one method
:meth:`LLMBackend.execute`, which answers a :class:`CompletionRequest` whose
options are all resolved; :meth:`LLMBackend.complete`, what callers use, checks
the arguments and fills in the backend's defaults once, for every backend.
Keeping the surface this small is what lets the planner's tests run without a
model and lets the benchmark swap backends.

Errors are reported through :class:`LLMError` and its subclasses so callers
can tell "the model is missing" (an install problem) from "the server is down"
(an operations problem) from "the reply was garbage" (a model problem) and
decide whether to retry, fall back to a purely symbolic plan, or stop.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BackendTimeoutError",
    "BackendUnavailableError",
    "Completion",
    "CompletionRequest",
    "GrammarError",
    "IncompatibleServerError",
    "LLMBackend",
    "LLMError",
    "LLMOptions",
    "ModelLoadError",
    "ModelNotFoundError",
    "Priming",
    "SAMPLER",
    "validate_messages",
]

FinishReason = Literal["stop", "length", "unknown"]

#: the sampler barsym's own decoders run, and so ask a server for: no penalty on repeated tokens (a reply
#: like ``craft 2 stick: 2 planks`` repeats its count), and when sampling (temperature > 0) top-k, top-p and
#: min-p as llama-cpp-python's ``create_chat_completion`` sets them
SAMPLER = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}


# --------------------------------------------------------------------------- errors


class LLMError(Exception):
    """Base class for every failure of a language-model backend.

    Catch this to fall back to a model-free strategy; the message always says
    what went wrong and, where there is one, how to fix it.
    """


class ModelNotFoundError(LLMError):
    """No model file where one was expected (install problem, not a model problem)."""


class ModelLoadError(LLMError):
    """A model file exists but could not be loaded (corrupt, truncated, wrong format)."""


class BackendUnavailableError(LLMError):
    """The backend cannot be reached or is not installed (server down, library missing)."""


class BackendTimeoutError(LLMError):
    """The backend did not answer within the configured timeout."""


class FatalBackendError(LLMError):
    """A failure no fallback may hide: the command stops on it (one line, exit status 2).

    Unlike the other backend errors, every later call would fail the same way,
    and a plan made without the model but under the LLM planner's name would
    report symbolic numbers as the model's. barsym's planners, scorer, repairer
    and parser never fall back from one: the model gateway re-raises it where
    any other failure is counted (``barsym.reasoning.calls.model_calls``), and the
    command line turns it into one line naming what to fix.
    """


class IncompatibleServerError(FatalBackendError):
    """The URL answers HTTP, but not the OpenAI chat API (404/405/501, not JSON, no ``choices``, a redirect)."""


class CredentialsRefusedError(FatalBackendError):
    """The server refused the credentials (HTTP 401 or 403): the API key is wrong, missing or not allowed."""


class BrokenModelError(FatalBackendError):
    """The model computed numbers that are not finite (NaN, infinity): a damaged model or adapter file."""


class GrammarError(LLMError):
    """A grammar or JSON schema was rejected before generation started."""


# --------------------------------------------------------------------------- data


class LLMOptions(BaseModel):
    """Generation and runtime settings shared by all backends.

    Defaults favour reproducibility (greedy decoding, fixed seed) because the
    planner's output is checked against a symbolic graph and benchmarked:
    identical inputs should give identical plans.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int = Field(256, ge=1, description="Upper bound on generated tokens per call.")
    temperature: float = Field(0.0, ge=0.0, le=5.0, description="0 means greedy decoding.")
    seed: int = Field(0, ge=0, description="Sampling seed; irrelevant when temperature is 0.")
    n_ctx: int = Field(2048, ge=64, description="Context window for in-process models.")
    n_threads: int | None = Field(None, ge=1, description="CPU threads for in-process models; None means all cores.")

    def resolved_threads(self) -> int:
        """Thread count to pass to llama.cpp (it defaults to half the cores otherwise)."""
        return self.n_threads or max(1, os.cpu_count() or 1)


class Completion(BaseModel):
    """One model reply plus the accounting the benchmark reports.

    ``evaluated_prompt_tokens`` is how many prompt tokens the backend actually
    ran through the model for this call; ``cached_prompt_tokens`` is the part
    it could reuse from a previous call's KV cache.  Either is ``None`` when the
    backend cannot know (e.g. a server that does not report it).
    """

    model_config = ConfigDict(frozen=True)

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = None
    evaluated_prompt_tokens: int | None = None
    finish_reason: FinishReason = "unknown"
    elapsed_s: float = 0.0
    model: str | None = None
    #: model evaluations spent on the reply (one per generated token token-by-token; fewer with
    #: forced-span decoding); None when the backend cannot know
    evaluations: int | None = None
    #: reply tokens appended from the grammar's forced text rather than chosen one decode step each
    drafted_tokens: int = 0

    def parse_json(self) -> Any:
        """Parse :attr:`text` as JSON, raising :class:`LLMError` with an excerpt if it is not.

        A truncated reply (``finish_reason == "length"``) is named as such,
        because the fix is a larger ``max_tokens``, not a better prompt.
        """
        try:
            return json.loads(self.text)
        except ValueError as exc:
            hint = " The reply was cut off by max_tokens; raise max_tokens." if self.finish_reason == "length" else ""
            raise LLMError(f"model reply is not valid JSON ({exc}).{hint} Reply starts: {self.text[:200]!r}") from None


@dataclass(frozen=True)
class Priming:
    """What :meth:`LLMBackend.prime` did with a fixed prompt prefix.

    ``source`` is ``"disk"`` (a saved state was loaded), ``"evaluated"`` (the
    model ran over the prefix; ``saved`` says whether the state was written for
    the next process) or ``"memory"`` (already in this process's KV cache).
    """

    source: Literal["disk", "evaluated", "memory"]
    tokens: int
    seconds: float
    saved: bool = False


@dataclass(frozen=True)
class CompletionRequest:
    """One chat completion as a backend answers it: the messages and every option resolved.

    Made by :meth:`LLMBackend.complete` (arguments checked, ``None`` filled from
    the backend's :class:`LLMOptions`), so a backend's :meth:`LLMBackend.execute`
    neither checks nor defaults anything, and a test fake can record it as is.
    """

    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    seed: int
    json_schema: dict[str, Any] | None = None
    grammar: str | None = None
    stop: list[str] | None = None

    @property
    def last_user_message(self) -> str:
        """Content of the final user message ("" if none), the usual thing to assert on."""
        for msg in reversed(self.messages):
            if msg.get("role") == "user":
                return msg.get("content", "")
        return ""


# --------------------------------------------------------------------------- interface


def validate_messages(messages: Any) -> list[dict[str, str]]:
    """Check the chat message list up front so every backend fails the same way.

    Raises ``ValueError`` (a caller bug, deliberately not an :class:`LLMError`
    so it is not swallowed by a fallback path).
    """
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ValueError(f"messages[{i}] must be a dict, got {type(msg).__name__}")
        role, content = msg.get("role"), msg.get("content")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"messages[{i}]['role'] must be system/user/assistant, got {role!r}")
        if not isinstance(content, str):
            raise ValueError(f"messages[{i}]['content'] must be a string, got {content!r}")
    return messages


class LLMBackend(ABC):
    """A chat model the planner can query.

    Subclasses implement :meth:`execute`; callers use :meth:`complete`, whose
    keyword arguments left as ``None`` fall back to :attr:`options`.
    ``grammar`` (GBNF text) and ``json_schema`` are mutually exclusive ways to
    constrain the output.
    """

    options: LLMOptions
    #: whether :meth:`continuation_logprobs` answers (the in-process model; a scripted fake when asked to)
    gives_probabilities: bool = False

    def __init__(self, options: LLMOptions | None = None) -> None:
        self.options = options or LLMOptions()

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        grammar: str | None = None,
        stop: list[str] | str | None = None,
    ) -> Completion:
        """Return the model's reply to ``messages``: the arguments checked and resolved once, then :meth:`execute`."""
        validate_messages(messages)
        if json_schema is not None and grammar is not None:
            raise ValueError("pass either grammar or json_schema, not both")
        if grammar is not None and not grammar.strip():
            raise ValueError("grammar must be non-empty GBNF text")
        if isinstance(stop, str):
            stop = [stop]
        per_call = {"max_tokens": max_tokens, "temperature": temperature, "seed": seed}
        # Validate through the model so a bad per-call value fails here, with
        # the same message as a bad default, not deep inside a backend.
        merged = LLMOptions.model_validate(
            {**self.options.model_dump(), **{k: v for k, v in per_call.items() if v is not None}}
        )
        request = CompletionRequest(
            messages=messages,
            max_tokens=merged.max_tokens,
            temperature=merged.temperature,
            seed=merged.seed,
            json_schema=json_schema,
            grammar=grammar,
            stop=stop,
        )
        return self.execute(request)

    @abstractmethod
    def execute(self, request: CompletionRequest) -> Completion:
        """Answer one request whose options are all resolved (what each backend implements)."""

    def continuation_logprobs(self, messages: list[dict[str, str]], continuations: list[str]) -> list[float]:
        """The natural log-probability of each text in ``continuations`` as the start of the reply to ``messages``.

        What a score read from the model's distribution needs (P(" yes"), the
        expected 1-10 digit) instead of one generated token. The default raises
        :class:`LLMError`: an HTTP chat server does not return the probability of
        a text it did not generate, so only in-process backends (and test fakes)
        implement it.
        """
        raise LLMError(
            f"{type(self).__name__} cannot give token probabilities; "
            "use the in-process model (the default, or --model FILE.gguf)"
        )

    def model_metadata(self, key: str) -> str | None:
        """A value the model file declares under ``key`` (GGUF metadata), or None.

        How a model tells its users what it was made for: ``barsym distill``
        writes the step-score method it taught (``barsym.step_score_method``),
        which the step scorer then reads by default. Only an in-process model has
        a file to read; a server or a fake says nothing unless told.
        """
        return None

    def prime(self, messages: list[dict[str, str]]) -> Priming | None:
        """Prepare for many calls whose messages start with ``messages`` (a fixed few-shot prefix).

        Backends that can keep a prompt's KV state do the work once here; the
        default does nothing and returns None (a server caches on its own side).
        """
        return None

    def close(self) -> None:  # noqa: B027 (optional hook; the default has nothing to free)
        """Release resources (model memory, connections); safe to call twice."""

    def __enter__(self) -> LLMBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
