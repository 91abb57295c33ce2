"""The forced-span path and the pinned few-shot prefix of :class:`~.llamacpp.LlamaCppBackend`.

Kept apart from the backend's loading and token-by-token code so each stays
readable; the methods use the backend's attributes (``_llama``, ``_spans``,
``store``, ``_lock``, ``prefix_cache``, ``model_path``) and are only meant
to be mixed into it. See :mod:`.span_decoder` for the decoding and
:mod:`.prefix_state` for the saved states.
"""

from __future__ import annotations

import json
import time
import warnings

from .base import Completion, LLMError, Priming
from .grammar_match import UnsupportedGrammar
from .prefix_state import PrefixKey, PrefixStateWarning, model_identity
from .span_decoder import SpanDecoder

__all__ = ["SpanDecoding"]


class SpanDecoding:
    """Mixin: grammar-constrained completions by forced-span decoding, and :meth:`prime`."""

    def _complete_spans(self, messages, grammar, max_tokens: int, temperature: float, seed: int,
                        stop: list[str] | None) -> Completion:
        """One grammar-constrained completion by forced-span decoding (the lock is held)."""
        spans = self._spans
        start = time.perf_counter()
        try:
            prompt = spans.render(messages)
            if not self.prefix_cache:
                spans.truncate(0)
            result = spans.generate(prompt, grammar, max_tokens, temperature, seed)
        except ValueError as exc:  # a prompt beyond n_ctx; UnsupportedGrammar: no admissible token
            if isinstance(exc, UnsupportedGrammar):
                raise LLMError(f"the grammar admits no token: {exc}") from None
            raise LLMError(
                f"llama.cpp refused the request: {exc}. If the prompt is too long, "
                f"shorten it or raise n_ctx (now {self._llama.n_ctx()})."
            ) from None
        except RuntimeError as exc:
            spans.truncate(0)  # the cache is in an unknown state after a failed decode
            raise LLMError(f"llama.cpp failed during generation: {exc}") from None
        text, finish = result.text, result.finish_reason
        for marker in stop or ():
            if marker and marker in text:
                text, finish = text[: text.index(marker)], "stop"
        return Completion(
            text=text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=len(result.tokens),
            evaluated_prompt_tokens=result.evaluated_prompt_tokens,
            cached_prompt_tokens=result.prompt_tokens - result.evaluated_prompt_tokens,
            finish_reason=finish,
            elapsed_s=time.perf_counter() - start,
            model=self.model_path.name,
            evaluations=result.evaluations,
            drafted_tokens=result.drafted,
        )

    def prime(self, messages: list[dict[str, str]]) -> Priming | None:
        """Evaluate (or load) the fixed prefix ``messages`` once and pin it in the KV cache.

        Needs forced-span decoding and prefix caching; otherwise a no-op (None).
        With ``state_dir`` the state is loaded from, or saved to, disk; a saved
        state that fails any check is ignored with a :class:`PrefixStateWarning`.
        """
        if self._llama is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        spans = self._spans
        if spans is None or not self.prefix_cache:
            return None
        with self._lock:
            start = time.perf_counter()
            tokens = spans.render(list(messages), generation_prompt=False)
            llama = self._llama
            if spans.pinned == len(tokens) and llama.input_ids[: len(tokens)].tolist() == tokens:
                return Priming("memory", len(tokens), time.perf_counter() - start)
            key = self._prefix_key(spans, messages, tokens) if self.store is not None else None
            if key is not None:
                data = self.store.load(key, tokens)
                if data is not None:
                    if spans.restore(tokens, data):
                        return Priming("disk", len(tokens), time.perf_counter() - start)
                    warnings.warn(f"llama.cpp could not load the saved prompt state {self.store.path_for(key)}; "
                                  "evaluating the prompt again", PrefixStateWarning, stacklevel=2)
            try:
                spans.prime(tokens)
            except (ValueError, RuntimeError) as exc:
                spans.truncate(0)
                raise LLMError(f"llama.cpp could not evaluate the prompt prefix: {exc}") from None
            saved = False
            if key is not None:
                data = spans.state_bytes()
                saved = data is not None and self.store.save(key, tokens, data) is not None
            return Priming("evaluated", len(tokens), time.perf_counter() - start, saved)

    def _prefix_key(self, spans: SpanDecoder, messages, tokens: list[int]) -> PrefixKey | None:
        try:
            model = model_identity(self.model_path)
        except OSError:
            return None
        params = self._llama.context_params
        settings = (f"n_batch={self._llama.n_batch} n_ubatch={params.n_ubatch} type_k={params.type_k} "
                    f"type_v={params.type_v} flash_attn={getattr(params, 'flash_attn_type', getattr(params, 'flash_attn', '?'))}")
        text = json.dumps(list(messages), sort_keys=True)
        return PrefixKey.for_prompt(model, text, tokens, getattr(self._llama_cpp, "__version__", "?"), settings)
