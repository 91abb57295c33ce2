"""Grammar-constrained decoding that runs the model only where the grammar branches.

In barsym's graph-mode grammar most of a reply is fixed text: in
``craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table`` the model
chooses two digits and the grammar decides the rest. llama.cpp's sampler still
spends a full decode step on each of those ~24 tokens (and masks the whole
49k vocabulary against the grammar every time). This decoder asks
:mod:`.grammar_match` for the forced text ahead, tokenizes it, and evaluates
it as **one batch with logits at every position** -- a draft, as in
speculative decoding, where the grammar is the draft model.

The draft is then checked position by position with exactly the rule
llama.cpp's greedy sampler applies: the token with the highest logit among
those the grammar admits (ties: the lowest token id). Where the model would
have chosen another token (it prefers ``" 3"`` to a lone ``" "``, say), the
rest of the draft is dropped from the KV cache and decoding continues from the
model's token. So the text is the text token-by-token greedy decoding gives;
what changes is how many model evaluations it takes (the choice points, plus
one per divergence). Only the candidates at the top of the logits are tested
against the grammar, instead of the whole vocabulary.

Sampling (``temperature > 0``, used for retries) follows the same sampler
chain as llama-cpp-python (top-k 40, top-p 0.95, min-p 0.05, temperature),
over the admissible candidates whose logit is within ``_TAIL`` of the best;
its random stream is numpy's, seeded per call, so a seeded run is
reproducible but draws differ from llama.cpp's own sampler.

The Llama object's own bookkeeping (``input_ids``, ``n_tokens``) is kept in
step with the KV cache, so its ``create_chat_completion`` can still be used
on the same instance (the backend does for unconstrained calls).
"""

from __future__ import annotations

import ctypes
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .grammar_match import CompiledGrammar, GrammarState, UnsupportedGrammar, compile_grammar

__all__ = ["SpanDecoder", "SpanResult"]

_TOP = 64  # candidates sorted per step before falling back to a full sort
_TAIL = 10.0  # sampling ignores admissible tokens this far (in logits) below the best one
TOP_K, TOP_P, MIN_P = 40, 0.95, 0.05  # llama-cpp-python's create_chat_completion defaults
_GRAMMARS = 32


@dataclass(frozen=True)
class SpanResult:
    """One generation: the reply and what it cost."""

    text: str
    tokens: tuple[int, ...]
    finish_reason: str  # "stop" (end of generation) or "length"
    prompt_tokens: int
    evaluated_prompt_tokens: int
    evaluations: int  # model evaluations (batches) spent on the reply, prompt excluded
    drafted: int  # reply tokens that came from forced-text drafts
    rejected_drafts: int  # draft tokens the model would not have chosen (dropped again)


class SpanDecoder:
    """Forced-span decoding on one ``llama_cpp.Llama`` (see the module docstring)."""

    def __init__(self, llama: Any, llama_cpp: Any):
        self.llama, self.lc = llama, llama_cpp
        self.vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self.n_vocab = int(llama.n_vocab())
        self._ids = np.arange(self.n_vocab)
        self._pieces: dict[int, str] = {}
        self._eog: dict[int, bool] = {}
        self._grammars: OrderedDict[str, CompiledGrammar | UnsupportedGrammar] = OrderedDict()
        self.formatter = self._formatter()
        self.pinned = 0  # tokens at the start of the KV cache that every call keeps (a primed prefix)

    # ------------------------------------------------------------------ prompts
    def _formatter(self) -> Any:
        """The GGUF's own chat template, as llama-cpp-python renders it; None for other chat formats."""
        llama = self.llama
        template = (getattr(llama, "metadata", None) or {}).get("tokenizer.chat_template")
        if llama.chat_handler is not None or llama.chat_format != "chat_template.default" or not template:
            return None
        from llama_cpp import llama_chat_format

        def text(token: int) -> str:
            return llama._model.token_get_text(token) if token != -1 else ""

        return llama_chat_format.Jinja2ChatFormatter(
            template=template, eos_token=text(llama.token_eos()), bos_token=text(llama.token_bos()))

    @property
    def available(self) -> bool:
        return self.formatter is not None

    def render(self, messages: list[dict[str, str]], generation_prompt: bool = True) -> list[int]:
        """The prompt tokens ``create_chat_completion`` would evaluate for ``messages``."""
        self.formatter.add_generation_prompt = generation_prompt
        result = self.formatter(messages=messages)
        return self.llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

    def grammar(self, text: str) -> CompiledGrammar | None:
        """``text`` compiled for this decoder, or None when only llama.cpp's sampler can run it exactly."""
        found = self._grammars.get(text)
        if found is None:
            try:
                found = compile_grammar(text)
            except UnsupportedGrammar as exc:
                found = exc
            self._grammars[text] = found
            while len(self._grammars) > _GRAMMARS:
                self._grammars.popitem(last=False)
        self._grammars.move_to_end(text)
        return None if isinstance(found, UnsupportedGrammar) else found

    # ------------------------------------------------------------------ the KV cache
    def kept_prefix(self, prompt: list[int]) -> int:
        """Prompt tokens whose KV entries are reused.

        With a pinned prefix that the prompt starts with: exactly the prefix, so
        every call evaluates the rest of its prompt as one batch and its logits
        do not depend on which call came before. Otherwise the longest common
        prefix with the cache, as llama-cpp-python does (at least one token is
        evaluated, for fresh logits).
        """
        llama = self.llama
        cached = llama.input_ids[: llama.n_tokens].tolist()
        if self.pinned and len(prompt) > self.pinned and cached[: self.pinned] == prompt[: self.pinned]:
            return self.pinned
        same = 0
        for a, b in zip(cached, prompt):
            if a != b:
                break
            same += 1
        return min(same, len(prompt) - 1)

    def truncate(self, keep: int) -> None:
        llama = self.llama
        if keep < llama.n_tokens:
            llama._ctx.kv_cache_seq_rm(-1, keep, -1)
            llama.n_tokens = keep
        if keep < self.pinned:
            self.pinned = 0  # the prefix is gone from the cache
        llama._requires_eval = True  # the context's logits no longer belong to its last token

    def evaluate(self, tokens: list[int], first_output: int) -> np.ndarray:
        """Append ``tokens`` to the KV cache; the logits after each of ``tokens[first_output:]``."""
        llama = self.llama
        if llama.n_tokens + len(tokens) > llama.n_ctx():
            raise ValueError(f"Requested tokens ({llama.n_tokens + len(tokens)}) exceed context window of "
                             f"{llama.n_ctx()}")
        step, parts = llama.n_batch, []
        batch = llama._batch.batch
        for start in range(0, len(tokens), step):
            chunk = tokens[start:start + step]
            n_past = llama.n_tokens
            llama._batch.set_batch(batch=chunk, n_past=n_past, logits_all=False)
            outputs = 0
            for i in range(len(chunk)):
                batch.logits[i] = start + i >= first_output
                outputs += start + i >= first_output
            llama._ctx.decode(llama._batch)
            llama.input_ids[n_past:n_past + len(chunk)] = chunk
            llama.n_tokens = n_past + len(chunk)
            if outputs:
                rows = np.ctypeslib.as_array(self.lc.llama_get_logits(llama.ctx), shape=(outputs, self.n_vocab))
                parts.append(rows if start + step >= len(tokens) else rows.copy())
        llama._requires_eval = True
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    # ------------------------------------------------------------------ tokens and the grammar
    def _piece(self, token: int) -> str:
        piece = self._pieces.get(token)
        if piece is None:
            buf = ctypes.create_string_buffer(64)
            n = self.lc.llama_token_to_piece(self.vocab, token, buf, 64, 0, True)  # as llama.cpp's grammar sees it
            if n > 64:
                buf = ctypes.create_string_buffer(n)
                n = self.lc.llama_token_to_piece(self.vocab, token, buf, n, 0, True)
            raw = buf.raw[:max(n, 0)]
            piece = raw.decode("ascii") if raw and raw.isascii() and b"\x00" not in raw else ""
            self._pieces[token] = piece
        return piece

    def _is_eog(self, token: int) -> bool:
        found = self._eog.get(token)
        if found is None:
            found = self._eog[token] = bool(self.lc.llama_vocab_is_eog(self.vocab, token))
        return found

    def _after(self, token: int, state: GrammarState) -> GrammarState | bool | None:
        """The grammar state after ``token``; True for an admissible end of generation; None if refused."""
        if self._is_eog(token):
            return True if state.accepting else None
        piece = self._piece(token)
        return state.advance(piece) if piece else None

    def _ranked(self, row: np.ndarray):
        """Token ids by falling logit (ties: lower id first): the top few, then the rest on demand."""
        top = np.argpartition(row, -_TOP)[-_TOP:]
        top = top[np.lexsort((top, -row[top]))]
        yield from top.tolist()
        order = np.lexsort((self._ids, -row))
        yield from order[_TOP:].tolist()

    def choose(self, row: np.ndarray, state: GrammarState, temperature: float, rng) -> int:
        """The token llama.cpp's sampler chain would pick among those the grammar admits."""
        if temperature <= 0:
            for token in self._ranked(row):
                if self._after(token, state) is not None:
                    return token
            raise UnsupportedGrammar("the grammar admits no token here")
        ids, logits = [], []
        for token in self._ranked(row):
            if logits and (row[token] < logits[0] - _TAIL or len(ids) == TOP_K):
                break
            if self._after(token, state) is not None:
                ids.append(token)
                logits.append(float(row[token]))
        if not ids:
            raise UnsupportedGrammar("the grammar admits no token here")
        values = np.array(logits, dtype=np.float64)
        probs = np.exp(values - values[0])
        probs /= probs.sum()
        keep = int(np.searchsorted(np.cumsum(probs), TOP_P) + 1)  # top-p: smallest prefix reaching TOP_P
        keep = max(1, min(keep, int(np.sum(values >= values[0] + math.log(MIN_P)))))  # then min-p
        scaled = np.exp((values[:keep] - values[0]) / temperature)
        return ids[int(rng.choice(keep, p=scaled / scaled.sum()))]

    def _draft(self, state: GrammarState) -> list[int]:
        """The forced text ahead as tokens; a trailing whitespace token is left to the model, which
        usually writes it joined with the next (free) character."""
        forced = state.forced()
        if not forced:
            return []
        tokens = self.llama.tokenize(forced.encode("utf-8"), add_bos=False, special=False)
        while tokens and not self._piece(tokens[-1]).strip():
            tokens.pop()
        return tokens[: self.llama.n_batch - 1]

    # ------------------------------------------------------------------ generation
    def generate(self, prompt: list[int], grammar: CompiledGrammar, max_tokens: int, temperature: float,
                 seed: int) -> SpanResult:
        """Decode a reply to ``prompt`` under ``grammar``.

        Each model evaluation takes the tokens chosen since the last one (at
        first: the prompt after the kept prefix) plus the draft of forced text
        that follows them, so a reply costs one evaluation per choice point
        (plus one per draft token the model would have written differently).
        """
        keep = self.kept_prefix(prompt)
        self.truncate(keep)
        rng = np.random.default_rng(seed) if temperature > 0 else None
        state, out = grammar.start(), []
        evaluations = drafted = rejected = 0
        finish = "length"
        pending = prompt[keep:]  # tokens not yet in the KV cache; the logits after the last one are needed
        while True:
            draft = [] if state.accepting else self._draft(state)[: max(0, max_tokens - len(out))]
            start = self.llama.n_tokens
            rows = self.evaluate(pending + draft, first_output=len(pending) - 1)
            evaluations += 1
            row, used = rows[0], 0
            for token in draft:
                if self.choose(row, state, temperature, rng) != token:
                    break
                state = self._after(token, state)
                out.append(token)
                used += 1
                row = rows[used]
            drafted += used
            rejected += len(draft) - used
            self.truncate(start + len(pending) + used)
            row = row.copy()
            if len(out) >= max_tokens:
                break
            token = self.choose(row, state, temperature, rng)
            after = self._after(token, state)
            if after is True:
                finish = "stop"
                break
            state = after
            out.append(token)
            pending = [token]
            if len(out) >= max_tokens:
                break
        text = b"".join(self._piece(t).encode("ascii") for t in out).decode("utf-8", "ignore")
        return SpanResult(text=text, tokens=tuple(out), finish_reason=finish, prompt_tokens=len(prompt),
                          evaluated_prompt_tokens=len(prompt) - keep, evaluations=evaluations, drafted=drafted,
                          rejected_drafts=rejected)

    def prime(self, tokens: list[int]) -> None:
        """Evaluate ``tokens`` from an empty cache and pin them: later prompts starting with them keep them."""
        self.llama._ctx.kv_cache_clear()
        self.llama.n_tokens = 0
        self.evaluate(tokens, first_output=len(tokens) - 1)
        self.pinned = len(tokens)

    def pin_loaded(self, tokens: list[int]) -> None:
        """Record that the KV cache now holds ``tokens`` (restored from a saved state) and pin them."""
        self.llama.input_ids[: len(tokens)] = tokens
        self.llama.n_tokens = len(tokens)
        self.llama._requires_eval = True
        self.pinned = len(tokens)

    # ------------------------------------------------------------------ saved states
    def state_bytes(self) -> bytes | None:
        """llama.cpp's state of sequence 0 (the KV cells of the cached tokens); None if unsupported."""
        lc, ctx = self.lc, self.llama.ctx
        if not hasattr(lc, "llama_state_seq_get_data"):
            return None
        size = lc.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = lc.llama_state_seq_get_data(ctx, buf, size, 0)
        return bytes(buf)[:written] if written else None

    def restore(self, tokens: list[int], data: bytes) -> bool:
        """Load a state saved by :meth:`state_bytes` for ``tokens`` and pin them; False if llama.cpp refuses it."""
        lc, llama = self.lc, self.llama
        if not hasattr(lc, "llama_state_seq_set_data") or len(tokens) >= llama.n_ctx():
            return False
        llama._ctx.kv_cache_clear()
        llama.n_tokens = 0
        src = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        loaded = lc.llama_state_seq_set_data(llama.ctx, src, len(data), 0)
        memory = getattr(llama._ctx, "memory", None)
        if loaded and memory is not None and hasattr(lc, "llama_memory_seq_pos_max"):
            loaded = lc.llama_memory_seq_pos_max(memory, 0) == len(tokens) - 1
        if not loaded:
            llama._ctx.kv_cache_clear()
            return False
        self.pin_loaded(tokens)
        return True
