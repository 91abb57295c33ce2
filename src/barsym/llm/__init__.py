"""Language-model backends for barsym's planner.

The planner proposes decomposition steps with a small local model and checks
them against the symbolic crafting graph; this subpackage is the only place
that talks to a model.  Importing it is cheap: the backends' modules (and
numpy, which the in-process one's span decoder needs) load on first use of
their names, and ``llama_cpp`` only when an in-process backend is created, so
the rest of barsym (and its tests) work without the optional ``llm`` extra.

One protocol, :class:`LLMBackend` (:mod:`.base`, with its options and errors), and
its backends, each in one place: the in-process llama.cpp backend and its
plumbing in :mod:`.llamacpp`, the OpenAI-compatible server backend in
:mod:`.http`, and beside the protocol the two that run no model: :mod:`.fake`
(scripted replies, for tests) and :mod:`.stand_in` (choosers under the
grammar, the baselines). What they share: :mod:`.settings`, the GBNF helpers
(:mod:`.grammar`, :mod:`.grammar_match`), a reply's time limit
(:mod:`.time_limit`) and what this install has of the extra (:mod:`.install`).

Typical use::

    from barsym.llm import make_backend

    with make_backend() as llm:                   # packaged SmolLM2 GGUF, in-process
        reply = llm.complete(messages, grammar='root ::= "yes" | "no"', max_tokens=2)
        print(reply.text)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..lazy_names import lazy_names
from .base import (
    BackendTimeoutError,
    BackendUnavailableError,
    BrokenModelError,
    Completion,
    CompletionRequest,
    CredentialsRefusedError,
    FatalBackendError,
    GrammarError,
    IncompatibleServerError,
    LLMBackend,
    LLMError,
    LLMOptions,
    ModelLoadError,
    ModelNotFoundError,
    validate_messages,
)

if TYPE_CHECKING:
    from .fake import RecordedCall, ScriptedLLM, ScriptExhaustedError
    from .grammar import lint_gbnf
    from .http.backend import OpenAIHTTPBackend
    from .llamacpp.backend import LlamaCppBackend
    from .llamacpp.embedded import ENV_VAR as MODEL_ENV_VAR
    from .llamacpp.embedded import default_model_path, packaged_model_path

#: the names loaded on first use: the backends (the in-process one brings numpy and the span decoder),
#: so that ``import barsym.llm`` -- and every command that only reads the model settings -- stays light
_LAZY = {
    "MODEL_ENV_VAR": ("llamacpp.embedded", "ENV_VAR"),
    "default_model_path": ("llamacpp.embedded", "default_model_path"),
    "packaged_model_path": ("llamacpp.embedded", "packaged_model_path"),
    "RecordedCall": ("fake", "RecordedCall"),
    "ScriptedLLM": ("fake", "ScriptedLLM"),
    "ScriptExhaustedError": ("fake", "ScriptExhaustedError"),
    "lint_gbnf": ("grammar", "lint_gbnf"),
    "LlamaCppBackend": ("llamacpp.backend", "LlamaCppBackend"),
    "OpenAIHTTPBackend": ("http.backend", "OpenAIHTTPBackend"),
}


__all__ = [
    "MODEL_ENV_VAR",
    "URL_ENV_VAR",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "BrokenModelError",
    "Completion",
    "CompletionRequest",
    "CredentialsRefusedError",
    "FatalBackendError",
    "GrammarError",
    "IncompatibleServerError",
    "LLMBackend",
    "LLMError",
    "LLMOptions",
    "LlamaCppBackend",
    "ModelLoadError",
    "ModelNotFoundError",
    "OpenAIHTTPBackend",
    "RecordedCall",
    "ScriptExhaustedError",
    "ScriptedLLM",
    "default_model_path",
    "lint_gbnf",
    "make_backend",
    "packaged_model_path",
    "validate_messages",
]

URL_ENV_VAR = "BARSYM_LLM_URL"


def make_backend(
    model_path: str | os.PathLike | None = None,
    url: str | None = None,
    *,
    options: LLMOptions | None = None,
    timeout: float = 60.0,
    api_key: str | None = None,
    prefix_cache: bool = True,
    verbose: bool = False,
    model: str | None = None,
    state_dir: str | os.PathLike | None = None,
    adapter: str | os.PathLike | None = None,
    **backend_kwargs: Any,
) -> LLMBackend:
    """Pick and build a backend from the usual CLI-style settings.

    * ``url`` (or ``$BARSYM_LLM_URL`` when neither argument is given) selects
      :class:`OpenAIHTTPBackend`; ``timeout``/``api_key`` apply to it.
    * Otherwise the GGUF at ``model_path`` / ``$BARSYM_MODEL`` / the packaged
      SmolLM2 is loaded in-process with :class:`LlamaCppBackend`.

    Giving both ``model_path`` and ``url`` is an error, because it is
    ambiguous which model would answer.  Extra keyword arguments go to the
    chosen backend's constructor; ``model`` (a server's model name) goes to the server's client,
    ``state_dir`` and ``adapter`` to the in-process model's.
    """
    if model_path is not None and url is not None:
        raise ValueError(
            "give either model_path (in-process model) or url (HTTP server), not both; "
            "the server decides which model it serves"
        )
    if url is None and model_path is None:
        url = os.environ.get(URL_ENV_VAR, "").strip() or None
    if url is not None:
        from .http.backend import OpenAIHTTPBackend

        return OpenAIHTTPBackend(url, options=options, timeout=timeout, api_key=api_key, model=model, **backend_kwargs)
    try:
        from .llamacpp.backend import LlamaCppBackend
    except ImportError as exc:  # numpy, which the in-process backend needs (the [llm] extra's): one line
        raise BackendUnavailableError(f"the in-process backend cannot be loaded: {exc}") from exc
    return LlamaCppBackend(
        model_path,
        options=options,
        prefix_cache=prefix_cache,
        verbose=verbose,
        state_dir=state_dir,
        adapter=adapter,
        **backend_kwargs,
    )


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
