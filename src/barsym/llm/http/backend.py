"""Backend for an OpenAI-compatible chat server, using only the standard library.

Why a server backend at all: a model too big to reload per process (or one
shared by several benchmark workers) is better kept in a long-running
``python -m llama_cpp.server`` or llama.cpp ``llama-server``.  Why urllib: the
planner should not pull an HTTP client dependency for one POST request.

What each kind of server reads -- the grammar's field (llama.cpp's ``grammar``,
vLLM's ``guided_grammar``, none for OpenAI's API), barsym's sampler in its field
names, ``response_format`` for a JSON schema -- is :mod:`.dialect`; with
``grammar_style="auto"`` (the default) the server's ``/v1/models`` says which it
is, and a server that takes no grammar, or is not known, is named in one
warning: its output is not constrained.  Beware: llama-cpp-python's server
(0.3.x) does not validate a grammar, and one its parser rejects kills the server
process (SIGSEGV).  So grammars are linted client-side first
(:func:`~barsym.llm.grammar.lint_gbnf`) and refused with :class:`GrammarError`;
``check_grammar=False`` turns that off.  What still differs from the in-process
model is said once, at the start of a run (:meth:`OpenAIHTTPBackend.differences`).

Every failure maps onto the :mod:`barsym.llm.base` hierarchy: connection
refused / reset -> :class:`BackendUnavailableError`, socket timeout ->
:class:`BackendTimeoutError`, anything unparseable -> :class:`LLMError` with
an excerpt of the body so the cause is visible in logs.

Until the server has once answered like the API, an answer that says "this is
not the API" (HTTP 404, 405 or 501, a body that is not JSON, JSON without
``choices``) raises :class:`IncompatibleServerError` instead: the URL points
at some other web server (``python -m http.server`` answers every POST with
501), and no retry or fallback can fix that. After a good answer the same
replies are ordinary, possibly passing, :class:`LLMError`.

Token counts (``usage``, llama-server's ``timings``) are taken only as whole
numbers from 0 to 10 million, with cached and evaluated at most the prompt;
anything else (negative, fractional, absurd, not a number) counts as not
reported, and the backend warns once (``RuntimeWarning``; the CLI prints it as
one line). The reply itself is still used: a wrong counter is an accounting
fault of the server, not a reason to throw away the model's answer.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any, Literal

from ...redact import redact, remember_secret, url_without_password
from ..base import (
    BackendTimeoutError,
    BackendUnavailableError,
    Completion,
    CompletionRequest,
    CredentialsRefusedError,
    GrammarError,
    IncompatibleServerError,
    LLMBackend,
    LLMError,
    LLMOptions,
)
from ..grammar import lint_gbnf
from . import dialect
from .dialect import GRAMMAR_STYLES, style_of_owner
from .transport import TooLarge, Watch, is_loopback, opener_for, read_capped, warn_plain_http, within
from .usage import token_counts

__all__ = ["OpenAIHTTPBackend"]

_EXCERPT = 300
#: the largest reply read: a chat completion of a few hundred tokens is a few kilobytes
MAX_REPLY_BYTES = 8 * 1024 * 1024
#: of an error reply, only this much is read (it is quoted in one line anyway)
MAX_ERROR_BYTES = 64 * 1024
#: HTTP statuses that mean "no such API here" rather than "the API failed this time"
_NOT_THE_API = (404, 405, 501)


def _excerpt(body: bytes | str) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(redact(text).split())  # secrets hidden before the cut: half a key is harder to find
    return text[:_EXCERPT] + ("..." if len(text) > _EXCERPT else "")


class OpenAIHTTPBackend(LLMBackend):
    """Chat completions via ``POST {base_url}/v1/chat/completions``.

    ``base_url`` may be given with or without the trailing ``/v1``.
    ``timeout`` (seconds) bounds the whole call, connecting and every read
    (a server that drips a byte a second is cut off at the deadline), so a
    stuck server surfaces as :class:`BackendTimeoutError` instead of a hang;
    a reply over :data:`MAX_REPLY_BYTES` is refused, not buffered.
    Requests to loopback hosts (every spelling: :func:`is_loopback`) bypass
    any ``http_proxy`` setting, since a proxy cannot reach this machine's
    127.0.0.1 anyway. Redirects are never followed (the key would go along),
    ``user:password@`` in the URL is sent as Basic auth and never echoed, and
    a key sent over plain http to another machine is warned about once.
    """

    def __init__(
        self,
        base_url: str,
        *,
        options: LLMOptions | None = None,
        timeout: float = 60.0,
        api_key: str | None = None,
        model: str | None = None,
        schema_style: Literal["llama", "openai"] = "llama",
        check_grammar: bool = True,
        grammar_style: Literal["auto", "llama", "vllm", "none"] = "auto",
    ) -> None:
        super().__init__(options)
        if grammar_style not in GRAMMAR_STYLES:
            raise ValueError(f"grammar_style must be one of {', '.join(GRAMMAR_STYLES)}, got {grammar_style!r}")
        try:
            parsed = urllib.parse.urlsplit(base_url.strip())
            parsed.port  # noqa: B018 -- a port that is not a number raises here, not at the first call
        except ValueError:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url must look like http://host:port, got {redact(base_url)!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if schema_style not in ("llama", "openai"):
            raise ValueError(f"schema_style must be 'llama' or 'openai', got {schema_style!r}")
        # user:password@ is taken out of the URL (never echoed in a message) and sent as Basic auth instead
        self._basic = None
        if parsed.username is not None or parsed.password is not None:
            import base64

            password = urllib.parse.unquote(parsed.password or "")
            pair = f"{urllib.parse.unquote(parsed.username or '')}:{password}"
            self._basic = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
            remember_secret(password, pair, self._basic.split()[1])  # a server echoing them: hidden all the same
        remember_secret(api_key or "")  # hidden from the call log, the output and every message from now on
        root = url_without_password(base_url.strip()).rstrip("/")
        if root.endswith("/v1"):
            root = root[: -len("/v1")]
        self.base_url = root
        self.endpoint = root + "/v1/chat/completions"
        self.timeout = float(timeout)
        self.api_key = api_key
        self.model = model
        self.schema_style = schema_style
        self.check_grammar = check_grammar
        self.grammar_style = grammar_style  # "auto": asked of the server before the first grammar is sent
        self.confirmed = False  # set by the first reply shaped like a chat completion
        self._warned_usage = False  # one warning about bad token counts per backend, not one per call
        self._said_differences = False  # what differs from the in-process model: said once (announce)
        self._opener = opener_for(parsed.hostname)
        if api_key and parsed.scheme == "http" and not is_loopback(parsed.hostname):
            warn_plain_http(self.base_url, parsed.hostname)

    # ------------------------------------------------------------------ grammar
    def detect_grammar_style(self) -> str:
        """How this server takes a grammar, from who its ``/v1/models`` says owns the model
        (:func:`~.dialect.style_of_owner`). A server that does not say is sent ``grammar`` and warned
        about once."""
        owner = ""
        try:
            with (
                within(self._opener, min(self.timeout, 10.0)),
                self._opener.open(self.base_url + "/v1/models", timeout=min(self.timeout, 10.0)) as reply,
            ):
                data = json.loads(read_capped(reply, MAX_ERROR_BYTES).decode("utf-8", "replace"))
            models = data.get("data") if isinstance(data, dict) else None
            if isinstance(models, list) and models and isinstance(models[0], dict):
                owner = str(models[0].get("owned_by") or "").lower()
        except (OSError, ValueError, RecursionError, http.client.HTTPException, TooLarge):
            return "llama"  # no model list: the llama.cpp servers' form, as before
        host_only = urllib.parse.urlsplit(self.base_url).hostname or ""
        if not owner and not host_only.endswith("openai.com"):
            return "llama"  # a list that names no owner says nothing either
        style = style_of_owner(owner, host_only)
        if style is None or style == "none":
            self._said_differences = True  # the one line about this server is the warning below
        if style == "none":
            warnings.warn(
                f"the server at {self.base_url} cannot constrain output (it takes no grammar, nor barsym's "
                f"sampler settings): replies are free text, and only the verifier checks them",
                RuntimeWarning,
                stacklevel=3,
            )
        elif style is None:
            style = "llama"
            warnings.warn(
                f"the server at {self.base_url} (models owned by {owner!r}) is not one barsym "
                f"knows; the grammar is sent as llama.cpp's 'grammar' field, and if the server ignores "
                f"it, output is not constrained",
                RuntimeWarning,
                stacklevel=3,
            )
        return style

    def differences(self) -> list[str]:
        """What this server does unlike barsym's in-process model, given the same GGUF (asks the server once).

        Through a llama.cpp server the chat template (the GGUF's own), the grammar and the
        sampler settings are the in-process model's, so greedy replies are the same; sampled
        ones are not, since the server draws from its own random stream. A server that takes
        no grammar is already named by :meth:`detect_grammar_style`.
        """
        if self.grammar_style == "auto":
            self.grammar_style = self.detect_grammar_style()
        if self.grammar_style == "none":
            return ["it takes no grammar and no sampler settings, so its replies are free text"]
        return [
            "sampled replies (temperature > 0, as in the retries after a refused answer) come from the "
            "server's random draws, not barsym's, so they can differ; greedy replies are the same"
        ]

    def announce(self) -> None:
        """Say in one line (a ``RuntimeWarning``) what differs from the in-process model; once per backend."""
        lines = self.differences()
        if lines and not self._said_differences:
            self._said_differences = True
            warnings.warn(f"through the server at {self.base_url}: {'; '.join(lines)}", RuntimeWarning, stacklevel=2)

    # ------------------------------------------------------------------ request

    def build_payload(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body sent to the server (public so tests can inspect it)."""
        return dialect.payload(request, model=self.model, style=self.grammar_style, schema_style=self.schema_style)

    def _post(self, payload: dict[str, Any]) -> bytes:
        """The reply body; within ``timeout`` seconds overall, at most :data:`MAX_REPLY_BYTES`, never redirected."""
        data = json.dumps(payload).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        elif self._basic:
            headers["Authorization"] = self._basic
        request = urllib.request.Request(self.endpoint, data=data, headers=headers, method="POST")
        with within(self._opener, self.timeout) as watch:
            return self._send(request, watch)

    def _send(self, request: urllib.request.Request, watch: Watch) -> bytes:
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                body = read_capped(response, MAX_REPLY_BYTES)
            if watch.expired:  # the shut-down socket read as the end of the body: it is not the whole reply
                raise self._timeout_error()
            return body
        except TooLarge as exc:
            size = f"a reply of {exc.declared} bytes" if exc.declared is not None else "a longer reply"
            raise LLMError(
                f"server {self.base_url} sent {size}; barsym reads at most "
                f"{MAX_REPLY_BYTES // (1024 * 1024)} MB of a chat completion"
            ) from None
        except urllib.error.HTTPError as exc:
            if watch.expired:
                raise self._timeout_error() from None
            raise self._http_error(exc) from None
        except urllib.error.URLError as exc:
            if watch.expired or isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise self._timeout_error() from None
            raise BackendUnavailableError(
                f"cannot reach {self.endpoint}: {redact(str(exc.reason))}. Is the server running? Start one "
                "with `python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port PORT`."
            ) from None
        except TimeoutError:
            raise self._timeout_error() from None
        except (ConnectionError, http.client.HTTPException, OSError, ValueError) as exc:
            if watch.expired:
                raise self._timeout_error() from None
            raise BackendUnavailableError(
                f"connection to {self.endpoint} failed mid-request: {type(exc).__name__}: {redact(str(exc))}. "
                "The server may have crashed or closed the connection; check its log."
            ) from None

    def _http_error(self, exc: urllib.error.HTTPError) -> LLMError:
        """The one-line error for an HTTP status that is not a reply."""
        try:
            body = _excerpt(exc.read(MAX_ERROR_BYTES) or b"")
        except (OSError, http.client.HTTPException, ValueError):
            body = ""
        if 300 <= exc.code < 400:
            location = " ".join(str(exc.headers.get("Location") or "(no Location)").split())[:200]
            # a setting to fix, not a failure to fall back from: every later call would be redirected too
            return IncompatibleServerError(
                f"server {self.base_url} answered HTTP {exc.code} redirecting to "
                f"{redact(url_without_password(location))}; barsym does not follow redirects (the API key would "
                "go along): give the final URL as --llm-url"
            )
        if exc.code in _NOT_THE_API and not self.confirmed:
            reason = f" {exc.reason}" if exc.reason else ""
            gist = "" if body.startswith("<") else f": {body[:120]}"  # an HTML error page adds nothing
            return self._incompatible(f"answered {exc.code}{reason}{gist}")
        if exc.code in (401, 403):  # every later call would be refused too: no fallback (FatalBackendError)
            return CredentialsRefusedError(
                f"server {self.base_url} refused the credentials (HTTP {exc.code}): {body}. Check the API key "
                "(--api-key, $OPENAI_API_KEY) and that it may use this server"
            )
        if exc.code in (502, 503, 504):
            return BackendUnavailableError(
                f"server {self.base_url} is not ready (HTTP {exc.code}): {body}. "
                "Wait for the model to load or check the server log."
            )
        return LLMError(f"server {self.base_url} answered HTTP {exc.code} to {self.endpoint}: {body}")

    def _incompatible(self, what: str) -> IncompatibleServerError:
        path = urllib.parse.urlsplit(self.endpoint).path
        return IncompatibleServerError(
            f"{self.base_url} is not an OpenAI-compatible server: POST {path} {what}. Point the URL at a "
            "llama.cpp or other OpenAI-compatible server, e.g. one started with "
            "`python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port PORT`."
        )

    def _warn_usage(self, bad: list[str]) -> None:
        if self._warned_usage:
            return
        self._warned_usage = True
        warnings.warn(
            f"server {self.base_url} reported unusable token counts ({', '.join(bad)}); they are counted as "
            "not reported, so the token totals are too low",
            RuntimeWarning,
            stacklevel=2,
        )

    def _timeout_error(self) -> BackendTimeoutError:
        return BackendTimeoutError(
            f"no whole reply from {self.endpoint} within {self.timeout:g}s. The server may be "
            "overloaded or generating too many tokens; raise timeout or lower max_tokens."
        )

    # ------------------------------------------------------------------ completion

    def execute(self, request: CompletionRequest) -> Completion:
        """POST one chat completion and parse the reply."""
        if self.grammar_style == "auto":  # before the first call: the grammar and sampler fields depend on it
            self.grammar_style = self.detect_grammar_style()
        if request.grammar is not None and self.check_grammar:
            problems = lint_gbnf(request.grammar)
            if problems:
                raise GrammarError(
                    "grammar not sent, because llama.cpp servers can crash on an invalid one: "
                    + "; ".join(problems[:5])
                    + ". Fix the grammar (or pass check_grammar=False if the lint is wrong)."
                )
        payload = self.build_payload(request)
        start = time.perf_counter()
        body = self._post(payload)
        elapsed = time.perf_counter() - start
        return self._parse(body, elapsed)

    def _parse(self, body: bytes, elapsed: float) -> Completion:
        try:
            reply = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python reads
            if not self.confirmed:
                raise self._incompatible(f"answered with a body that is not JSON: {_excerpt(body)[:120]!r}") from None
            raise LLMError(f"server {self.base_url} sent a reply that is not JSON: {_excerpt(body)!r}") from None
        try:
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
            if not isinstance(text, str):
                raise TypeError("content is not a string")
        except (KeyError, IndexError, TypeError, AttributeError):
            if not self.confirmed:
                raise self._incompatible(
                    f"answered JSON without choices[0].message: {_excerpt(body)[:120]!r}"
                ) from None
            raise LLMError(f"server {self.base_url} sent JSON without choices[0].message: {_excerpt(body)!r}") from None
        self.confirmed = True
        prompt_tokens, completion_tokens, cached, evaluated, bad = token_counts(reply)
        if bad:
            self._warn_usage(bad)
        finish = choice.get("finish_reason")
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_prompt_tokens=cached,
            evaluated_prompt_tokens=evaluated,
            finish_reason=finish if finish in ("stop", "length") else "unknown",
            elapsed_s=elapsed,
            model=str(reply.get("model") or self.model or "") or None,
        )
