"""The grammar engines forced-span decoding can run on, behind one interface.

:class:`~.span_decoder.SpanDecoder` asks a grammar three things at every step: the text
forced ahead (to draft it), whether a token may come next (to pick the model's best
admissible token) and the state after a token. Two engines answer:

* ``barsym`` (the default, pure Python, always there): :mod:`..grammar_match`, barsym's
  GBNF recogniser, which checks the few tokens at the top of the logits one by one.
* ``llguidance`` (optional, ``pip install llguidance``): Microsoft's Rust matcher, which
  computes the whole vocabulary's mask at once. The GBNF is converted with
  ``llguidance.gbnf_to_lark``, with ``no_forcing`` set: without it, inside forced text
  llguidance admits only the canonical tokenization ("craft" but not "c", "cr", "cra"),
  while llama.cpp's sampler -- whose greedy text the span decoder reproduces -- admits
  every token whose text fits. With it the two engines admit the same tokens.

Both take only the grammars :mod:`..grammar_match` mirrors exactly (ASCII, no negated
classes, no ``.``); anything else raises :class:`UnsupportedGrammar` and the backend
decodes token by token with llama.cpp's sampler, whichever engine is chosen.

The engine is chosen by ``$BARSYM_GRAMMAR_ENGINE`` (or the backend's ``grammar_engine``
argument); docs/results/grammar-engine.md compares the two.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Protocol

import numpy as np

from ..base import BackendUnavailableError
from ..grammar import GBNF_TOKEN
from ..grammar_match import MAX_FORCED, GrammarState, UnsupportedGrammar, check_supported, compile_grammar

__all__ = [
    "ENGINES",
    "ENGINE_ENV",
    "EngineGrammar",
    "EngineState",
    "GrammarEngine",
    "UnsupportedGrammar",
    "make_engine",
    "resolve_engine",
]

ENGINES = ("barsym", "llguidance")
ENGINE_ENV = "BARSYM_GRAMMAR_ENGINE"


class Vocabulary(Protocol):
    """What an engine needs of the model: :class:`~.native.NativeModel` has it."""

    n_vocab: int

    def piece(self, token: int, special: bool = True) -> bytes: ...

    def tokenize(self, text: str, add_bos: bool, special: bool) -> list[int]: ...

    def is_eog(self, token: int) -> bool: ...


class EngineState(Protocol):
    """Where a reply is in the grammar. Immutable: :meth:`after` and :meth:`advance` return a new state."""

    @property
    def accepting(self) -> bool:
        """The grammar may end here (an end-of-generation token is admissible)."""

    @property
    def finished(self) -> bool:
        """The grammar must end here: an end-of-generation token is the only admissible one."""

    def forced(self) -> str:
        """The text every continuation starts with (up to the first branch or possible end)."""

    def allows(self, token: int) -> bool:
        """Whether ``token`` (not an end-of-generation token) may come next."""

    def mask(self) -> np.ndarray:
        """:meth:`allows` for the whole vocabulary: one bool per token, end-of-generation tokens False."""

    def after(self, token: int) -> "EngineState | None":
        """The state after ``token``; None if the grammar refuses it."""

    def advance(self, text: str) -> "EngineState | None":
        """The state after ``text``; None if the grammar refuses it."""


class EngineGrammar(Protocol):
    def start(self) -> EngineState: ...


class GrammarEngine(Protocol):
    name: str

    def compile(self, gbnf: str) -> EngineGrammar:
        """``gbnf`` compiled; :class:`UnsupportedGrammar` if it is outside the subset both engines mirror."""


def resolve_engine(name: str | None = None) -> str:
    """The engine's name: ``name``, else ``$BARSYM_GRAMMAR_ENGINE``, else ``barsym``; an unknown one is a ValueError."""
    chosen = (name or os.environ.get(ENGINE_ENV, "").strip() or "barsym").lower()
    if chosen not in ENGINES:
        raise ValueError(f"{ENGINE_ENV}={chosen}: the grammar engine is one of {', '.join(ENGINES)}")
    return chosen


def make_engine(name: str, vocabulary: Vocabulary) -> GrammarEngine:
    """The engine ``name`` over ``vocabulary``; llguidance not installed is a :class:`BackendUnavailableError`."""
    if resolve_engine(name) == "llguidance":
        return LLGuidanceEngine(vocabulary)
    return BarsymEngine(vocabulary)


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


# ---------------------------------------------------------------------------------------- barsym's matcher


class BarsymEngine:
    """:mod:`..grammar_match`: a token is admitted when its text advances the recogniser."""

    name = "barsym"

    def __init__(self, vocabulary: Vocabulary):
        self.pieces = _Pieces(vocabulary)

    def compile(self, gbnf: str) -> "_BarsymGrammar":
        return _BarsymGrammar(compile_grammar(gbnf), self.pieces)


class _BarsymGrammar:
    def __init__(self, grammar, pieces: _Pieces):
        self.grammar, self.pieces = grammar, pieces

    def start(self) -> "_BarsymState":
        return _BarsymState(self.grammar.start(), self.pieces)


_ENDED = frozenset({()})  # the only parse left is the finished one


class _BarsymState:
    __slots__ = ("state", "pieces")

    def __init__(self, state: GrammarState, pieces: _Pieces):
        self.state, self.pieces = state, pieces

    @property
    def accepting(self) -> bool:
        return self.state.accepting

    @property
    def finished(self) -> bool:
        return self.state.stacks == _ENDED

    def forced(self) -> str:
        return self.state.forced()

    def allows(self, token: int) -> bool:
        piece = self.pieces(token)
        return bool(piece) and self.state.advance(piece) is not None

    def mask(self) -> np.ndarray:
        state = self.state
        return np.fromiter((bool(p) and state.advance(p) is not None for p in self.pieces.all()), dtype=bool)

    def after(self, token: int) -> "_BarsymState | None":
        piece = self.pieces(token)
        return self.advance(piece) if piece else None

    def advance(self, text: str) -> "_BarsymState | None":
        state = self.state.advance(text)
        return None if state is None else _BarsymState(state, self.pieces)


# ---------------------------------------------------------------------------------------- llguidance

#: llguidance's Lark reader refuses groups nested 30 deep (the plan grammar's optional steps nest deeper)
MAX_NESTING = 8


def flatten_groups(gbnf: str, limit: int = MAX_NESTING) -> str:
    """``gbnf`` with every group nested deeper than ``limit`` made a rule of its own (the same language)."""
    added: list[str] = []
    while True:
        spans, depth, deepest, opened = [], 0, 0, []
        pos = 0
        while pos < len(gbnf):
            m = GBNF_TOKEN.match(gbnf, pos)
            if m is None:
                return gbnf  # not GBNF this reader knows: leave it to the converter to say so
            if m.group() == "(":
                depth += 1
                opened.append((m.start(), depth))
            elif m.group() == ")" and opened:
                start, level = opened.pop()
                if level > limit:
                    spans.append((start, m.end(), level))
                deepest = max(deepest, level)
                depth -= 1
            pos = m.end()
        if deepest <= limit:
            return gbnf + "".join(added)
        inner = max(level for _, _, level in spans)
        for start, end, level in sorted(spans, reverse=True):
            if level == inner:
                name = f"llg-group-{len(added)}"
                added.append(f"\n{name} ::= {gbnf[start + 1 : end - 1]}")
                gbnf = gbnf[:start] + name + gbnf[end:]


_DEFINITION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:", re.MULTILINE)
_GROUP = re.compile(r"\bLLG_GROUP_(\d+)\b")


def groups_as_rules(lark: str) -> str:
    """The groups :func:`flatten_groups` lifted out of a rule stay rules in the Lark text.

    ``gbnf_to_lark`` makes a rule of plain text a terminal (one lexeme), and llguidance's lexer
    ends a lexeme only where it cannot go on: ``step "\\n" (more steps)?`` as one lexeme,
    followed by ``"done"``, would refuse "done" after "\\n", since "d" goes on as "dig down".
    A group lifted out of a terminal (a long item name) stays a terminal.
    """
    starts = [(m.start(), m.group(1)) for m in _DEFINITION.finditer(lark)]
    owner: dict[str, str] = {}  # lifted group -> the definition that uses it
    for (at, name), (end, _) in zip(starts, starts[1:] + [(len(lark), "")]):
        for used in _GROUP.finditer(lark, at + len(name), end):
            owner[used.group()] = name
    rules: set[str] = set()
    changed = True
    while changed:
        changed = False
        for group, name in owner.items():
            if group not in rules and (name[0].islower() or name in rules):
                rules.add(group)
                changed = True
    return _GROUP.sub(lambda m: m.group().lower() if m.group() in rules else m.group(), lark)


def import_llguidance() -> Any:
    """``llguidance`` and its GBNF converter, or one line saying how to install it."""
    try:
        import llguidance
        from llguidance.gbnf_to_lark import gbnf_to_lark
    except ImportError as exc:
        raise BackendUnavailableError(
            f"{ENGINE_ENV}=llguidance, but llguidance is not importable ({exc}): "
            "pip install 'barsym[llguidance]' (or unset it for barsym's own matcher)"
        ) from None
    return llguidance, gbnf_to_lark


class LLGuidanceEngine:
    """llguidance's matcher over the model's vocabulary (its tokenizer is built once, ~1 s for 49k tokens)."""

    name = "llguidance"

    def __init__(self, vocabulary: Vocabulary):
        self.llguidance, self._to_lark = import_llguidance()
        self.pieces = _Pieces(vocabulary)
        self.n_vocab = vocabulary.n_vocab
        self.tokenize = lambda text: vocabulary.tokenize(text, add_bos=False, special=False)
        self.tokenizer = self._tokenizer(vocabulary)
        self._eog = np.array([self.pieces.is_eog(t) for t in range(self.n_vocab)], dtype=bool)

    def _tokenizer(self, vocabulary: Vocabulary):
        llg = self.llguidance
        handle = getattr(vocabulary, "vocab", None)
        if handle is not None:  # a llama.cpp vocabulary: llguidance tokenizes through llama.cpp itself
            import llguidance.llamacpp

            with warnings.catch_warnings():  # it asks llama-cpp-python 0.3.36 for each token's attributes the old way
                warnings.simplefilter("ignore", DeprecationWarning)
                return llguidance.llamacpp.lltokenizer_from_vocab(handle)
        n = vocabulary.n_vocab
        eog = [t for t in range(n) if vocabulary.is_eog(t)]

        class Wrapper:  # llguidance's TokenizerWrapper protocol, for vocabularies without llama.cpp
            eos_token_id = eog[0] if eog else 0
            bos_token_id = None
            tokens = [b"\xff" + vocabulary.piece(t) if t in eog else vocabulary.piece(t) for t in range(n)]
            special_token_ids = eog
            is_tokenizer_wrapper = True

            def __call__(self, text):
                return vocabulary.tokenize(text if isinstance(text, str) else text.decode(), False, False)

        return llg.LLTokenizer(Wrapper(), n_vocab=n, eos_token=eog or None)

    def lark(self, gbnf: str) -> str:
        """``gbnf`` as llguidance's Lark, letting the model choose its tokenization (see the module docstring)."""
        lark = groups_as_rules(self._to_lark(flatten_groups(gbnf)))
        options = '%llguidance { "no_forcing": true }'
        return lark.replace("%llguidance {}", options, 1) if "%llguidance {}" in lark else options + "\n" + lark

    def compile(self, gbnf: str) -> "_LLGrammar":
        check_supported(gbnf)  # the same subset as barsym's matcher: both engines decode the same grammars by spans
        llg = self.llguidance
        try:
            grammar = llg.LLMatcher.grammar_from_lark(self.lark(gbnf))
        except Exception as exc:  # the converter raises plain exceptions
            raise UnsupportedGrammar(f"llguidance cannot read the grammar: {exc}") from None
        matcher = llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise UnsupportedGrammar(f"llguidance refused the grammar: {matcher.get_error()}")
        return _LLGrammar(self, matcher)


class _LLGrammar:
    def __init__(self, engine: LLGuidanceEngine, matcher):
        self.engine, self.matcher = engine, matcher

    def start(self) -> "_LLState":
        return _LLState(self.engine, self.matcher.deep_copy())


class _LLState:
    __slots__ = ("engine", "matcher", "_mask", "_forced")

    def __init__(self, engine: LLGuidanceEngine, matcher):
        self.engine, self.matcher = engine, matcher
        self._mask: np.ndarray | None = None
        self._forced: str | None = None

    @property
    def accepting(self) -> bool:
        return bool(self.matcher.is_accepting())

    @property
    def finished(self) -> bool:
        return bool(self.matcher.is_stopped())

    def forced(self) -> str:
        if self._forced is None:
            self._forced = self.matcher.compute_ff_bytes().decode("utf-8", "ignore")[:MAX_FORCED]
        return self._forced

    def mask(self) -> np.ndarray:
        if self._mask is None:
            bits = np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8)
            mask = np.unpackbits(bits, bitorder="little")[: self.engine.n_vocab].astype(bool)
            mask[self.engine._eog[: len(mask)]] = False
            self._mask = mask
        return self._mask

    def allows(self, token: int) -> bool:
        if self._mask is not None:
            return bool(self._mask[token])
        return not self.engine._eog[token] and self.matcher.validate_tokens([token]) == 1  # cheaper than a mask

    def after(self, token: int) -> "_LLState | None":
        if not self.allows(token):
            return None
        matcher = self.matcher.deep_copy()
        return _LLState(self.engine, matcher) if matcher.consume_token(token) else None

    def advance(self, text: str) -> "_LLState | None":
        if not text:
            return self
        matcher = self.matcher.deep_copy()
        tokens = self.engine.tokenize(text)
        if matcher.try_consume_tokens(tokens) != len(tokens) or matcher.is_error():
            return None
        return _LLState(self.engine, matcher)
