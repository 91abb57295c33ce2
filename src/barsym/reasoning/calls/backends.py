"""The model backends the planners share: one per process and settings, built from the planners' options.

Loading the in-process model takes seconds and its few-shot prefix state is worth keeping, so every planner
of a process -- ``bar`` and ``llm-only`` (:mod:`.llm_planners`), ``deps`` and ``cot`` (forward plans),
``bar-sc``'s scorer and repairer, and the commands that ask a model without a planner (``score``,
``repair``, ``parse``) -- gets its backend from :func:`backend_for`, the one builder, cached by its settings.
A server URL is probed once, when the backend is made, so a server that is not there is a one-line error
before any planning starts. A server that wants an API key or a model name gets its client there too, and
a stand-in its chooser (issue 54: before, six functions here, in the registry and in the commands built
backends, each from its own arguments); :func:`barsym.llm.make_backend` is the library's constructor it calls.

Kept apart from the planners so that each of them can reach the shared backend without importing
another planner's module (before issue 36 the forward planners reached it through ``llm_planners``, a
cycle of four modules).
"""

from __future__ import annotations

import http.client
import os
import socket
import urllib.error
import urllib.parse

from ...kb import cache_dir
from ...llm import (
    BackendTimeoutError,
    BackendUnavailableError,
    LLMBackend,
    LLMOptions,
    default_model_path,
    make_backend,
)
from ...llm.http.transport import opener_for, within
from .progress import Phase, Progress, ProgressEvent

N_CTX = 2048  # few-shot prefix ~1000 tokens with facts + a goal's conversation with two retries
STATE_DIR = "llm-state"  # under the cache folder: saved few-shot prefix states (llm.llamacpp.prefix_state)

_backends: dict[tuple, LLMBackend] = {}


def backend_for(settings, *, n_ctx: int | None = None, progress: Progress | None = None) -> LLMBackend:
    """The one backend builder: the model :class:`~barsym.llm.settings.ModelSettings` (or a planner's
    :class:`~barsym.reasoning.options.PlannerLLMOptions`) name -- a stand-in chooser, a server's client, or the
    in-process model -- made once per process and settings (the model loaded, or the server probed, once).

    Every planner (:func:`~barsym.reasoning.spec.PlannerContext` ``backend`` first, when a caller hands one),
    state consistency's scorer and repairer, and ``score``, ``repair`` and ``parse`` get their backend here.
    ``n_ctx`` (default :data:`N_CTX`) sizes an in-process model's context: DEPS' dialogue needs more than
    ``bar``'s calls, and a context of another size is another backend (the model is loaded once more). A server
    with an API key (``--api-key`` or ``$OPENAI_API_KEY``, read only if the user set it) or a model name gets its
    own client; the key is never part of a spec written into a run file, nor put into the environment.
    """
    if settings.llm_stand_in:  # a chooser under the same grammar: nothing to load, nothing to share
        from ...llm.stand_in import make_stand_in

        return make_stand_in(settings.llm_stand_in)
    model, url, timeout = settings.model, settings.llm_url, settings.timeout
    if model is not None and url is not None:
        raise ValueError("give either --model (in-process) or --llm-url (server), not both")
    n_ctx = n_ctx or N_CTX
    key = getattr(settings, "api_key", None) or os.environ.get("OPENAI_API_KEY") or None
    named = getattr(settings, "llm_model", None)
    if url is not None and (key or named):  # its own client, at the usual context (the server's is its own)
        cache: tuple = ("server", url.strip(), timeout, key, named)
        n_ctx = N_CTX
    elif url is not None:
        cache, key = ("url", url.strip(), timeout), None
    else:
        cache = ("model", str(default_model_path(model)), settings.threads, n_ctx, settings.adapter)
    backend = _backends.get(cache)
    if backend is not None:
        return backend
    options = LLMOptions(n_threads=settings.threads, n_ctx=n_ctx)
    if url is not None:
        if progress is not None:
            progress(ProgressEvent(Phase.LOADING, f"connecting to the LLM server at {url.strip()}"))
        backend = make_backend(url=url.strip(), options=options, timeout=timeout, api_key=key, model=named)
        probe(backend.base_url, min(timeout, 10.0))
    else:
        if progress is not None:
            progress(ProgressEvent(Phase.LOADING, f"loading the model {cache[1].rsplit('/', 1)[-1]}"))
        backend = make_backend(
            model_path=cache[1], options=options, state_dir=cache_dir() / STATE_DIR, adapter=settings.adapter
        )
    _backends[cache] = backend
    return backend


def settings_record(settings) -> dict:
    """What model these settings (:class:`~barsym.llm.settings.ModelSettings`, or a planner's
    :class:`~barsym.reasoning.options.PlannerLLMOptions`) run, as every output names it
    (:func:`barsym.llm.provenance.model_record`: GGUF and adapter with their SHA-256), resolved as
    :func:`backend_for` resolves them, with the digests remembered in the same state folder."""
    from ...llm.provenance import model_record

    return model_record(
        settings.model, settings.adapter, settings.llm_url, settings.llm_stand_in, folder=cache_dir() / STATE_DIR
    )


def server_context(backend: LLMBackend, n_ctx: int) -> int | None:
    """``n_ctx`` where ``backend`` is a server's client, else None (the backend's own context counts).

    A planner sizes its prompts by its backend's context. An in-process model is loaded with the context the
    planner asks for; a server's context is its own (``--n_ctx`` when it was started) and not known here, and
    its client is shared by every planner of the process, made with the first one's settings. So a planner
    holds its prompts to the context it would load a model with (DEPS' dialogue, self-refine's rounds),
    rather than to whichever planner connected first (before: DEPS through a server stopped "context full"
    before round 0 on the long tasks, sized to 2,048 tokens by an earlier row of the same process).
    """
    from ...llm.http.backend import OpenAIHTTPBackend

    return n_ctx if isinstance(backend, OpenAIHTTPBackend) else None


def probe(base_url: str, timeout: float) -> None:
    """Check that something answers HTTP at ``base_url`` within ``timeout`` s overall; any HTTP status counts as up."""
    opener = opener_for(urllib.parse.urlsplit(base_url).hostname)
    try:
        with within(opener, timeout) as watch, opener.open(base_url + "/v1/models", timeout=timeout):
            return
    except urllib.error.HTTPError:
        return  # it answered; not every server lists models
    except urllib.error.URLError as exc:
        if watch.expired or isinstance(exc.reason, (socket.timeout, TimeoutError)):
            raise BackendTimeoutError(f"the LLM server at {base_url} did not answer within {timeout:g}s") from None
        raise BackendUnavailableError(
            f"cannot reach the LLM server at {base_url}: {exc.reason}; is it running?"
        ) from None
    except TimeoutError:
        raise BackendTimeoutError(f"the LLM server at {base_url} did not answer within {timeout:g}s") from None
    except (OSError, http.client.HTTPException) as exc:  # a reply that is not HTTP, or cut off at the deadline
        if watch.expired:
            raise BackendTimeoutError(f"the LLM server at {base_url} did not answer within {timeout:g}s") from None
        raise BackendUnavailableError(
            f"cannot reach the LLM server at {base_url}: {type(exc).__name__}: {exc}"
        ) from None
