"""The model backends the planners share: one per process and settings, built from the planners' options.

Loading the in-process model takes seconds and its few-shot prefix state is worth keeping, so every planner
of a process -- ``bar`` and ``llm-only`` (:mod:`.llm_planners`), ``deps`` and ``cot`` (forward plans),
``bar-sc``'s scorer and repairer, and the commands that ask a model without a planner (``score``,
``repair``, ``parse``) -- gets its backend here, cached by its settings. A server URL is probed once,
when the backend is made, so a server that is not there is a one-line error before any planning starts.
A server that wants an API key or a model name gets its client here too (:func:`server_backend`), so
every backend a planner or command uses is built in this module (on :func:`barsym.llm.make_backend`).

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

from ..kb import cache_dir
from ..llm import BackendTimeoutError, BackendUnavailableError, LLMBackend, LLMOptions, default_model_path, make_backend
from ..llm.http.transport import opener_for, within
from .progress import Phase, Progress, ProgressEvent

N_CTX = 2048  # few-shot prefix ~1000 tokens with facts + a goal's conversation with two retries
STATE_DIR = "llm-state"  # under the cache folder: saved few-shot prefix states (llm.llamacpp.prefix_state)

_backends: dict[tuple, LLMBackend] = {}


def shared_backend(
    model: str | None = None,
    url: str | None = None,
    threads: int | None = None,
    timeout: float = 30.0,
    progress: Progress | None = None,
    n_ctx: int | None = None,
    adapter: str | None = None,
) -> LLMBackend:
    """The backend for these settings, created (and the model loaded, or the server probed) once per process.

    ``n_ctx`` (default :data:`N_CTX`) sizes an in-process model's context: DEPS' dialogue needs more than
    ``bar``'s calls, and a context of another size is another backend (the model is loaded once more)."""
    n_ctx = n_ctx or N_CTX
    if model is not None and url is not None:
        raise ValueError("give either --model (in-process) or --llm-url (server), not both")
    if url is not None:
        key: tuple = ("url", url.strip(), timeout)
    else:
        key = ("model", str(default_model_path(model)), threads, n_ctx, adapter)
    backend = _backends.get(key)
    if backend is None:
        options = LLMOptions(n_threads=threads, n_ctx=n_ctx)
        if url is not None:
            if progress is not None:
                progress(ProgressEvent(Phase.LOADING, f"connecting to the LLM server at {url.strip()}"))
            backend = make_backend(url=url.strip(), options=options, timeout=timeout)
            probe(backend.base_url, min(timeout, 10.0))
        else:
            if progress is not None:
                progress(ProgressEvent(Phase.LOADING, f"loading the model {key[1].rsplit('/', 1)[-1]}"))
            backend = make_backend(
                model_path=key[1], options=options, state_dir=cache_dir() / STATE_DIR, adapter=adapter
            )
        _backends[key] = backend
    return backend


def settings_backend(settings, progress: Progress | None = None) -> LLMBackend:
    """The backend :class:`~barsym.llm.settings.ModelSettings` name: a stand-in chooser, or the shared model or server
    (``barsym score``, ``repair`` and ``parse``, which take the model's settings without a planner's)."""
    if settings.llm_stand_in:
        from ..llm.stand_in import make_stand_in

        return make_stand_in(settings.llm_stand_in)
    return shared_backend(
        settings.model, settings.llm_url, settings.threads, settings.timeout, progress, adapter=settings.adapter
    )


def settings_record(settings) -> dict:
    """What model these settings (:class:`~barsym.llm.settings.ModelSettings`, or a planner's
    :class:`~barsym.reasoning.options.PlannerLLMOptions`) run, as every output names it
    (:func:`barsym.llm.provenance.model_record`: GGUF and adapter with their SHA-256), resolved as
    :func:`shared_backend` resolves them, with the digests remembered in the same state folder."""
    from ..llm.provenance import model_record

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
    from ..llm.http.backend import OpenAIHTTPBackend

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


def spec_backend(spec, n_ctx: int | None = None) -> LLMBackend:
    """The model a :class:`~barsym.reasoning.spec.PlannerSpec` names: its context's ``backend``, else the process's
    shared one for its settings (an in-process model loaded with ``n_ctx``)."""
    if spec.context.backend is not None:
        return spec.context.backend
    llm = spec.llm
    return shared_backend(
        llm.model, llm.llm_url, llm.threads, llm.timeout, spec.context.progress, n_ctx=n_ctx, adapter=llm.adapter
    )


def server_backend(settings):
    """The server backend for ``--llm-url`` with a model name or API key (``$OPENAI_API_KEY``); else None.

    ``settings``: :class:`~barsym.llm.settings.ModelSettings`. Without a key or a model name, the LLM planners
    build their usual shared backend. The key is never part of a spec written into a run file, nor put into
    the environment: ``barsym eval`` hands it to each worker as an argument, and it arrives here as
    ``settings.api_key``; ``$OPENAI_API_KEY`` is read only if the user set it.
    """
    key = settings.api_key or os.environ.get("OPENAI_API_KEY") or None
    if not settings.llm_url or not (key or settings.llm_model):
        return None
    backend = make_backend(
        url=settings.llm_url.strip(),
        options=LLMOptions(n_threads=settings.threads, n_ctx=N_CTX),
        timeout=settings.timeout,
        api_key=key,
        model=settings.llm_model,
    )
    probe(backend.base_url, min(settings.timeout, 10.0))
    return backend
