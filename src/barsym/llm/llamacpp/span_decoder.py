"""Grammar-constrained decoding that runs the model only where the grammar branches.

In barsym's graph-mode grammar most of a reply is fixed text: in
``craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table`` the model
chooses two digits and the grammar decides the rest. llama.cpp's sampler still
spends a full decode step on each of those ~24 tokens (and masks the whole
49k vocabulary against the grammar every time). This decoder asks
barsym's grammar matcher (:mod:`.token_grammar`) for
the forced text ahead, tokenizes it, and evaluates it as **one batch with
logits at every position** -- a draft, as in speculative decoding, where the
grammar is the draft model.

The draft is then checked position by position with exactly the rule
llama.cpp's greedy sampler applies: the token with the highest logit among
those the grammar admits (ties: the lowest token id). Where the model would
have chosen another token (it prefers ``" 3"`` to a lone ``" "``, say), the
rest of the draft is dropped from the KV cache and decoding continues from the
model's token. So the text is the text token-by-token greedy decoding gives;
what changes is how many model evaluations it takes (the choice points, plus
one per divergence). Only the candidates at the top of the logits are tested
against the grammar, instead of the whole vocabulary. Where the grammar fixes
the rest of the reply up to its end, that rest is written without an
evaluation at all: the text cannot differ, only its tokenization could.

Sampling (``temperature > 0``, used for retries) follows the same sampler
chain as llama-cpp-python (top-k 40, top-p 0.95, min-p 0.05, temperature),
over the admissible candidates whose logit is within ``_TAIL`` of the best;
its random stream is numpy's, seeded per call, so a seeded run is
reproducible but draws differ from llama.cpp's own sampler.

The KV cache is barsym's own :class:`~.native.NativeContext`, which tracks
the tokens it holds, so the token-by-token path (:mod:`.token_decoder`) can
continue from whatever this decoder left behind.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..base import SAMPLER
from ..time_limit import out_of_time
from .native import NativeContext
from .token_grammar import TokenGrammar, TokenMatcher, TokenState, UnsupportedGrammar

__all__ = ["SpanDecoder", "SpanResult"]

_TOP = 64  # candidates sorted per step before falling back to a full sort
_TAIL = 10.0  # sampling ignores admissible tokens this far (in logits) below the best one
TOP_K, TOP_P, MIN_P = SAMPLER["top_k"], SAMPLER["top_p"], SAMPLER["min_p"]  # create_chat_completion's defaults
_GRAMMARS = 32


@dataclass(frozen=True)
class SpanResult:
    """One generation: the reply and what it cost."""

    text: str
    tokens: tuple[int, ...]
    finish_reason: str  # "stop" (end of generation) or "length"
    prompt_tokens: int
    evaluated_prompt_tokens: int
    cached_prompt_tokens: int  # the prompt's start the KV cache already held
    evaluations: int  # model evaluations (batches) spent on the reply, prompt excluded
    drafted: int  # reply tokens that came from forced-text drafts
    rejected_drafts: int  # draft tokens the model would not have chosen (dropped again)


class SpanDecoder:
    """Forced-span decoding on one :class:`~.native.NativeContext` (see the module docstring)."""

    def __init__(self, context: NativeContext):
        self.context, self.model = context, context.model
        self.matcher = TokenMatcher(self.model)
        self.n_vocab = self.model.n_vocab
        self._ids = np.arange(self.n_vocab)
        self._piece = self.matcher.pieces  # a token's text as llama.cpp's grammar sees it ('' for non-ASCII)
        self._is_eog = self.matcher.pieces.is_eog
        self._grammars: OrderedDict[str, TokenGrammar | UnsupportedGrammar] = OrderedDict()

    def grammar(self, text: str) -> TokenGrammar | None:
        """``text`` compiled by the matcher, or None when only llama.cpp's sampler can run it exactly."""
        found = self._grammars.get(text)
        if found is None:
            try:
                found = self.matcher.compile(text)
            except UnsupportedGrammar as exc:
                found = exc
            self._grammars[text] = found
            while len(self._grammars) > _GRAMMARS:
                self._grammars.popitem(last=False)
        self._grammars.move_to_end(text)
        return None if isinstance(found, UnsupportedGrammar) else found

    # ------------------------------------------------------------------ tokens and the grammar
    def _admits(self, token: int, state: TokenState) -> bool:
        """Whether the grammar admits ``token`` next (an end of generation where it may end)."""
        return state.accepting if self._is_eog(token) else state.allows(token)

    def _after(self, token: int, state: TokenState) -> TokenState | bool | None:
        """The grammar state after ``token``; True for an admissible end of generation; None if refused."""
        if self._is_eog(token):
            return True if state.accepting else None
        return state.after(token)

    def _ranked(self, row: np.ndarray):
        """Token ids by falling logit (ties: lower id first): the top few, then the rest on demand."""
        top = np.argpartition(row, -_TOP)[-_TOP:]
        top = top[np.lexsort((top, -row[top]))]
        yield from top.tolist()
        order = np.lexsort((self._ids, -row))
        yield from order[_TOP:].tolist()

    def choose(self, row: np.ndarray, state: TokenState, temperature: float, rng) -> int:
        """The token llama.cpp's sampler chain would pick among those the grammar admits."""
        if temperature <= 0:
            best = int(row.argmax())  # the first of equal maxima: the lowest id, as the ranking's ties
            if self._admits(best, state):
                return best
            for token in self._ranked(row):
                if self._admits(token, state):
                    return token
            raise UnsupportedGrammar("the grammar admits no token here")
        ids, logits = [], []
        for token in self._ranked(row):
            if logits and (row[token] < logits[0] - _TAIL or len(ids) == TOP_K):
                break
            if self._admits(token, state):
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

    def _draft(self, state: TokenState) -> list[int]:
        """The forced text ahead as tokens; a trailing whitespace token is left to the model, which
        usually writes it joined with the next (free) character."""
        forced = state.forced()
        if not forced:
            return []
        tokens = self.model.tokenize(forced, add_bos=False, special=False)
        while tokens and not self._piece(tokens[-1]).strip():
            tokens.pop()
        return tokens[: self.context.n_batch - 1]

    def _forced_to_the_end(self, state: TokenState, room: int) -> list[int] | None:
        """The tokens of the reply's rest when the grammar fixes it up to its end within ``room`` tokens
        however it is tokenized (one token per character at most), else None.

        After the last choice of ``craft 1 wooden_pickaxe: 3 planks, 2`` the grammar admits one
        text, `` stick, 1 crafting_table``, and then only an end of generation. Evaluating it
        would only check which tokenization the model prefers, which the text does not depend
        on; so it is written without a model evaluation (a grammar that admits one reply costs
        none at all). None when a choice remains or the tokens do not spell the text back.
        """
        forced = state.forced()
        if not forced or state.accepting or len(forced) >= room:
            return None
        end = state.advance(forced)
        if end is None or not end.finished:
            return None
        tokens = self.model.tokenize(forced, add_bos=False, special=False)
        if "".join(self._piece(t) for t in tokens) != forced:
            return None
        return tokens

    # ------------------------------------------------------------------ generation
    def generate(
        self, prompt: list[int], grammar: TokenGrammar, max_tokens: int, temperature: float, seed: int
    ) -> SpanResult:
        """Decode a reply to ``prompt`` under ``grammar``.

        Each model evaluation takes the tokens chosen since the last one (at
        first: the prompt after the kept prefix) plus the draft of forced text
        that follows them, so a reply costs one evaluation per choice point
        (plus one per draft token the model would have written differently).
        """
        context = self.context
        max_tokens = context.reply_room(prompt, max_tokens)
        keep = context.kept_prefix(prompt)
        context.truncate(keep)
        rng = np.random.default_rng(seed) if temperature > 0 else None
        state, out = grammar.start(), []
        evaluations = drafted = rejected = 0
        finish = "length"
        pending = prompt[keep:]  # tokens not yet in the KV cache; the logits after the last one are needed
        while True:
            tail = self._forced_to_the_end(state, max_tokens - len(out))
            if tail is not None:
                out.extend(tail)  # the rest of the reply is fixed: no logits are needed to write it
                drafted += len(tail)
                finish = "stop"
                break
            draft = [] if state.accepting else self._draft(state)[: max(0, max_tokens - len(out))]
            start = len(context.tokens)
            rows = context.evaluate(pending + draft, first_output=len(pending) - 1)
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
            context.truncate(start + len(pending) + used)
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
            if len(out) >= max_tokens or out_of_time():  # a caller's deadline ends the reply as max_tokens does
                break
        text = b"".join(self._piece(t).encode("ascii") for t in out).decode("utf-8", "ignore")
        return SpanResult(
            text=text,
            tokens=tuple(out),
            finish_reason=finish,
            prompt_tokens=len(prompt),
            evaluated_prompt_tokens=len(prompt) - keep if evaluations else 0,  # none: the grammar fixed the reply
            cached_prompt_tokens=keep,
            evaluations=evaluations,
            drafted=drafted,
            rejected_drafts=rejected,
        )
