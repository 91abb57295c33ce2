"""barsym's GBNF matcher seen token by token, over a model's vocabulary: what span decoding asks of a grammar.

:class:`~.span_decoder.SpanDecoder` asks a grammar three things at every step: the text forced
ahead (to draft it), whether a token may come next (to pick the model's best admissible token) and
the state after a token. :mod:`..grammar_match` answers them by text; this module turns tokens into
their text as llama.cpp's grammar sees it (ASCII only: a token with any other byte never matches)
and keeps one API:

* :meth:`TokenMatcher.compile` -- GBNF to a :class:`TokenGrammar`, or :class:`UnsupportedGrammar`
  outside the subset :mod:`..grammar_match` mirrors exactly (then llama.cpp's sampler decodes);
* a :class:`TokenState` -- ``forced()``, ``allows(token)`` / ``mask()``, ``after(token)`` /
  ``advance(text)``, ``accepting`` / ``finished``. States are immutable, so going back is keeping
  the earlier state.

Until 2026-12-07 the same API had a second implementation on llguidance, chosen by
``$BARSYM_GRAMMAR_ENGINE``. It gave the same replies and was not faster end to end, but cost
~1.2 s per process to build its tokenizer (docs/results/grammar-engine.md), so it was removed;
:func:`check_engine_setting` says so to whoever still sets the variable.
"""

from __future__ import annotations

import os
import warnings
from typing import Protocol

import numpy as np

from ..grammar_match import GrammarState, UnsupportedGrammar, compile_grammar

__all__ = [
    "ENGINE_ENV",
    "TokenGrammar",
    "TokenMatcher",
    "TokenState",
    "UnsupportedGrammar",
    "Vocabulary",
    "check_engine_setting",
]

ENGINE_ENV = "BARSYM_GRAMMAR_ENGINE"
REMOVED_ENGINE = "llguidance"


def check_engine_setting() -> None:
    """``$BARSYM_GRAMMAR_ENGINE`` unset or ``barsym``: nothing; ``llguidance``: one warning that it was removed
    and barsym's matcher decodes (the replies are the same); anything else: a ValueError (one line, exit 2)."""
    chosen = os.environ.get(ENGINE_ENV, "").strip().lower()
    if chosen in ("", "barsym"):
        return
    if chosen == REMOVED_ENGINE:
        warnings.warn(
            f"{ENGINE_ENV}=llguidance: the llguidance engine was removed (same replies, slower to start: "
            f"docs/results/grammar-engine.md); barsym's own grammar matcher is used. Unset {ENGINE_ENV}",
            RuntimeWarning,
            stacklevel=3,
        )
        return
    raise ValueError(f"{ENGINE_ENV}={chosen}: barsym has one grammar engine, its own matcher; unset {ENGINE_ENV}")


class Vocabulary(Protocol):
    """What the matcher needs of the model: :class:`~.native.NativeModel` has it."""

    n_vocab: int

    def piece(self, token: int, special: bool = True) -> bytes: ...

    def is_eog(self, token: int) -> bool: ...


class _Pieces:
    """Each token's text as llama.cpp's grammar sees it (ASCII only: '' never matches), fetched once."""

    def __init__(self, vocabulary: Vocabulary):
        self.vocabulary = vocabulary
        self._text: dict[int, str] = {}
        self._eog: dict[int, bool] = {}
        self._all: list[str] | None = None

    def __call__(self, token: int) -> str:
        piece = self._text.get(token)
        if piece is None:
            raw = self.vocabulary.piece(token, special=True)
            piece = raw.decode("ascii") if raw and raw.isascii() and b"\x00" not in raw else ""
            self._text[token] = piece
        return piece

    def is_eog(self, token: int) -> bool:
        found = self._eog.get(token)
        if found is None:
            found = self._eog[token] = self.vocabulary.is_eog(token)
        return found

    def all(self) -> list[str]:
        """Every token's text ('' for end-of-generation tokens), for whole-vocabulary masks."""
        if self._all is None:
            self._all = ["" if self.is_eog(t) else self(t) for t in range(self.vocabulary.n_vocab)]
        return self._all


class TokenMatcher:
    """Compiles GBNF for one vocabulary: a token is admitted when its text advances :mod:`..grammar_match`."""

    def __init__(self, vocabulary: Vocabulary):
        self.pieces = _Pieces(vocabulary)

    def compile(self, gbnf: str) -> "TokenGrammar":
        """``gbnf`` compiled; :class:`UnsupportedGrammar` if it is outside the subset the matcher mirrors."""
        return TokenGrammar(compile_grammar(gbnf), self.pieces)


class TokenGrammar:
    """One compiled grammar; its transitions are memoised, so an eval asking it again and again pays once."""

    def __init__(self, grammar, pieces: _Pieces):
        self.grammar, self.pieces = grammar, pieces

    def start(self) -> "TokenState":
        return TokenState(self.grammar.start(), self.pieces)


_ENDED = frozenset({()})  # the only parse left is the finished one


class TokenState:
    """Where a reply is in the grammar. Immutable: :meth:`after` and :meth:`advance` return a new state."""

    __slots__ = ("state", "pieces")

    def __init__(self, state: GrammarState, pieces: _Pieces):
        self.state, self.pieces = state, pieces

    @property
    def accepting(self) -> bool:
        """The grammar may end here (an end-of-generation token is admissible)."""
        return self.state.accepting

    @property
    def finished(self) -> bool:
        """The grammar must end here: an end-of-generation token is the only admissible one."""
        return self.state.stacks == _ENDED

    def forced(self) -> str:
        """The text every continuation starts with (up to the first branch or possible end)."""
        return self.state.forced()

    def allows(self, token: int) -> bool:
        """Whether ``token`` (not an end-of-generation token) may come next."""
        piece = self.pieces(token)
        return bool(piece) and self.state.advance(piece) is not None

    def mask(self) -> np.ndarray:
        """:meth:`allows` for the whole vocabulary: one bool per token, end-of-generation tokens False."""
        state = self.state
        return np.fromiter((bool(p) and state.advance(p) is not None for p in self.pieces.all()), dtype=bool)

    def after(self, token: int) -> "TokenState | None":
        """The state after ``token``; None if the grammar refuses it."""
        piece = self.pieces(token)
        return self.advance(piece) if piece else None

    def advance(self, text: str) -> "TokenState | None":
        """The state after ``text``; None if the grammar refuses it."""
        state = self.state.advance(text)
        return None if state is None else TokenState(state, self.pieces)
