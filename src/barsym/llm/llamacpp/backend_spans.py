"""The forced-span path and the pinned few-shot prefix of :class:`~.backend.LlamaCppBackend`.

Kept apart from the backend's loading and token-by-token code so each stays
readable; the methods use the backend's attributes (``_context``, ``_prompt``,
``_spans``, ``store``, ``runtime``, ``prefix_cache``, ``model_path``, ``adapter_path``, ``model_name``) and are
only meant to be mixed into it. See :mod:`.span_decoder` for the decoding and
:mod:`.prefix_state` for the saved states.

A state loaded from disk is not trusted on its header alone (the header can be
rewritten along with the data): its last few tokens are evaluated again on top
of it, and the logits must be finite and match the ones saved when the state
was made. A state whose earlier KV entries were changed gives other logits
there, and is discarded and rebuilt.
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np

from ..base import Completion, LLMError, Priming
from .native import NonFiniteLogits
from .prefix_state import PrefixKey, PrefixStateWarning, StateCheck, model_identity
from .token_grammar import UnsupportedGrammar

__all__ = ["SpanDecoding"]

RECHECK_TOKENS = 4  # tokens at the end of a loaded state that are evaluated again
CHECK_TOP = 16  # logits saved for the check: the highest ones after the prefix
CHECK_TOLERANCE = 0.05  # logits differ this much between batch shapes, never more (measured: < 0.005)


class SpanDecoding:
    """Mixin: grammar-constrained completions by forced-span decoding, and :meth:`prime`."""

    def _complete_spans(
        self, messages, grammar, max_tokens: int, temperature: float, seed: int, stop: list[str] | None
    ) -> Completion:
        """One grammar-constrained completion by forced-span decoding (the lock is held)."""
        start = time.perf_counter()
        result = self._run_decoder(
            messages, lambda prompt: self._spans.generate(prompt, grammar, max_tokens, temperature, seed)
        )
        text, finish = result.text, result.finish_reason
        for marker in stop or ():
            if marker and marker in text:
                text, finish = text[: text.index(marker)], "stop"
        return Completion(
            text=text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=len(result.tokens),
            evaluated_prompt_tokens=result.evaluated_prompt_tokens,
            cached_prompt_tokens=result.cached_prompt_tokens,
            finish_reason=finish,
            elapsed_s=time.perf_counter() - start,
            model=self.model_name,
            evaluations=result.evaluations,
            drafted_tokens=result.drafted,
        )

    def _run_decoder(self, messages, decode):
        """Render ``messages``, empty the cache when prefix caching is off, and return ``decode(prompt)``;
        llama.cpp's refusals and failures become :class:`LLMError` (both decoding paths, the lock held)."""
        context = self._context
        try:
            prompt = self._prompt.render(messages)
            if not self.prefix_cache:
                context.truncate(0)
            return decode(prompt)
        except UnsupportedGrammar as exc:  # no admissible token (forced-span decoding only)
            raise LLMError(f"the grammar admits no token: {exc}") from None
        except NonFiniteLogits:
            context.truncate(0)
            raise self.broken() from None
        except ValueError as exc:  # a prompt beyond n_ctx
            raise LLMError(
                f"llama.cpp refused the request: {exc}. If the prompt is too long, "
                f"shorten it or raise n_ctx (now {context.n_ctx})."
            ) from None
        except RuntimeError as exc:
            context.truncate(0)  # the cache is in an unknown state after a failed decode
            raise LLMError(f"llama.cpp failed during generation: {exc}") from None

    def prime(self, messages: list[dict[str, str]]) -> Priming | None:
        """Evaluate (or load) the fixed prefix ``messages`` once and pin it in the KV cache.

        Needs forced-span decoding and prefix caching; otherwise a no-op (None).
        With ``state_dir`` the state is loaded from, or saved to, disk; a saved
        state that fails any check is ignored with a :class:`PrefixStateWarning`
        and rewritten.
        """
        if self._context is None:
            raise LLMError("this LlamaCppBackend was closed; create a new one")
        if self._spans is None or not self.prefix_cache:
            return None
        with self._lock:
            start = time.perf_counter()
            context = self._context
            tokens = self._prompt.with_next_turn(list(messages))  # the question's opening tokens too
            if context.pinned == len(tokens) and context.tokens[: len(tokens)] == tokens:
                return Priming("memory", len(tokens), time.perf_counter() - start)
            key = self._prefix_key(messages, tokens) if self.store is not None else None
            if key is not None:
                saved = self.store.load(key, tokens)
                if saved is not None:
                    problem = self._restore_checked(tokens, *saved)
                    if not problem:
                        return Priming("disk", len(tokens), time.perf_counter() - start)
                    warnings.warn(
                        f"discarding the saved prompt state {self.store.path_for(key)} ({problem}); "
                        "evaluating the prompt again",
                        PrefixStateWarning,
                        stacklevel=2,
                    )
            try:
                context.truncate(0)
                last = context.evaluate(tokens, first_output=len(tokens) - 1)[-1]
                context.pinned = len(tokens)
            except NonFiniteLogits:
                context.truncate(0)
                raise self.broken() from None
            except (ValueError, RuntimeError) as exc:
                context.truncate(0)
                raise LLMError(f"llama.cpp could not evaluate the prompt prefix: {exc}") from None
            saved_ok = False
            if key is not None:
                data = context.state_bytes()
                saved_ok = data is not None and self.store.save(key, tokens, data, _check_of(last)) is not None
            return Priming("evaluated", len(tokens), time.perf_counter() - start, saved_ok)

    def _restore_checked(self, tokens: list[int], payload: bytes, check: StateCheck) -> str:
        """Load a saved state and evaluate its last tokens again; '' if it holds, else why not."""
        context = self._context
        if not context.restore(tokens, payload):
            return "llama.cpp could not load it"
        redo = min(RECHECK_TOKENS, len(tokens) - 1)
        try:
            context.truncate(len(tokens) - redo)
            row = context.evaluate(tokens[len(tokens) - redo :], first_output=redo - 1)[-1]
        except (ValueError, RuntimeError) as exc:
            context.truncate(0)
            return f"evaluating its last tokens failed: {exc}"
        problem = ""
        if not np.isfinite(row).all():
            problem = "its logits are not finite numbers"
        elif float(np.max(np.abs(row[list(check.ids)] - np.array(check.logits, dtype=np.float32)))) > CHECK_TOLERANCE:
            problem = "it gives other logits than the model does for its last tokens"
        if problem:
            context.truncate(0)
            return problem
        context.pinned = len(tokens)
        return ""

    def _prefix_key(self, messages, tokens: list[int]) -> PrefixKey | None:
        try:
            model = model_identity(self.model_path)
            if self.adapter_path is not None:  # the adapter changes every key and value of the prefix
                model += "|adapter=" + model_identity(self.adapter_path)
        except OSError:
            return None
        settings = f"{self._context.settings()} profile={self.runtime.profile.name}"
        text = json.dumps(list(messages), sort_keys=True)
        return PrefixKey.for_prompt(model, text, tokens, self.library, settings, self.system)


def _check_of(row: np.ndarray) -> StateCheck:
    ids = np.argsort(-row, kind="stable")[:CHECK_TOP]
    return StateCheck(tuple(int(i) for i in ids), tuple(float(row[i]) for i in ids))
