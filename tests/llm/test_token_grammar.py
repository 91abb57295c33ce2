"""barsym's matcher token by token (:mod:`barsym.llm.llamacpp.token_grammar`) on barsym's reply grammars.

Over a small vocabulary of ASCII pieces (no model): at every prefix of sampled replies the state's mask
is exactly the tokens whose text the grammar admits next, the forced text is what every admitted token
agrees with, a finished state admits nothing, and a token is refused where its text is. On the session's
real model: along a reply, the mask is llama.cpp's own grammar sampler's on SmolLM2's 49,152 tokens --
the sampler the span decoder must reproduce. And ``$BARSYM_GRAMMAR_ENGINE``, which chose llguidance
until it was removed, says so in one line.
"""

from __future__ import annotations

import ctypes
import random
import string
import subprocess
import sys
import warnings

import numpy as np
import pytest

from barsym.llm.grammar_match import compile_grammar
from barsym.llm.llamacpp.token_grammar import ENGINE_ENV, TokenMatcher, UnsupportedGrammar, check_engine_setting
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import Vocabulary, render_plan
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder
from barsym.reasoning.prompts import baseline_prompts, deps_prompts
from barsym.reasoning.scoring.step_scorer import SCORE_GRAMMAR

WORDS = ["craft", "smelt", "mine", " 1", " 2", " 3", "stick", " stick", "planks", " cobblestone", ", ", ": ", "\n"]
WORDS += ["_pickaxe", "iron", "_ingot", "stone", " c", "oal", "log", "s;", " inventory", "done", "é"]


class PieceVocabulary:
    """Printable ASCII, a few multi-character pieces and one non-ASCII one; the last token ends generation."""

    def __init__(self):
        self.pieces = [c.encode() for c in string.printable if c not in "\x0b\x0c"] + [w.encode() for w in WORDS]
        self.pieces.append(b"<|im_end|>")
        self.n_vocab = len(self.pieces)

    def piece(self, token: int, special: bool = True) -> bytes:
        return self.pieces[token]

    def is_eog(self, token: int) -> bool:
        return token == self.n_vocab - 1


NAMES = [
    "graph: stone_pickaxe",
    "graph: torch",
    "graph: iron_ingot x3",
    "vocab",
    "cot/deps plan",
    "deps explanation",
    "feedback",
    "value",
    "score",
]


@pytest.fixture(scope="module")
def reply_grammars(kb):
    builder = GrammarBuilder(kb, graph_for(kb))
    vocab = Vocabulary(kb, graph_for(kb))
    out = {"graph: stone_pickaxe": builder.for_goal(Goal(item="stone_pickaxe")).text}
    out["graph: torch"] = builder.for_goal(Goal(item="torch", count=4)).text
    out["graph: iron_ingot x3"] = builder.for_goal(Goal(item="iron_ingot", count=3)).text
    out["vocab"] = builder.vocab()
    out["cot/deps plan"] = vocab.plan_grammar()
    out["deps explanation"] = deps_prompts.EXPLANATION_GRAMMAR
    out["feedback"] = baseline_prompts.FEEDBACK_GRAMMAR
    out["value"] = baseline_prompts.VALUE_GRAMMAR
    out["score"] = SCORE_GRAMMAR
    return out


def sampled_texts(grammar: str, rng: random.Random, n: int) -> list[str]:
    """Replies walked character by character through the recogniser, and each with one character changed."""
    out = []
    for _ in range(n):
        state, text = compile_grammar(grammar).start(), ""
        while len(text) < 400:
            options = [c for c in string.printable if state.step(c) is not None]
            if not options or (state.accepting and rng.random() < 0.3):
                break
            forced = state.forced()
            ch = forced[0] if forced else rng.choice(options)
            text, state = text + ch, state.step(ch)
        out.append(text)
        if text:
            i = rng.randrange(len(text))
            out.append(text[:i] + rng.choice("x9 ,:") + text[i + 1 :])
    return out


def admitted_by_text(by_chars, vocabulary: PieceVocabulary) -> np.ndarray:
    """The mask by its definition: a token is admitted when its text, character by character, goes on from
    ``by_chars`` (the prefix walked character by character in a grammar compiled apart from the one tested)."""
    out = []
    for token in range(vocabulary.n_vocab):
        piece = vocabulary.piece(token)
        state = None if vocabulary.is_eog(token) or not piece.isascii() else by_chars
        for ch in piece.decode() if state is not None else "":
            state = state.step(ch) if state is not None else None
        out.append(state is not None)
    return np.array(out)


def test_what_the_matcher_does_not_mirror_is_refused():
    with pytest.raises(UnsupportedGrammar):
        TokenMatcher(PieceVocabulary()).compile('root ::= [^"]+')


@pytest.mark.parametrize("name", NAMES)
def test_masks_forced_text_and_ends_on_the_reply_grammars(reply_grammars, name):
    vocabulary = PieceVocabulary()
    grammar = reply_grammars[name]
    compiled = TokenMatcher(vocabulary).compile(grammar)
    oracle = compile_grammar(grammar)
    rng = random.Random(name)
    checked = ended = refused = 0
    for text in sampled_texts(grammar, rng, 4):
        for cut in sorted({0, len(text), *rng.sample(range(len(text) + 1), min(len(text) + 1, 8))}):
            state = compiled.start().advance(text[:cut])
            by_chars = oracle.start()
            for ch in text[:cut]:
                by_chars = by_chars.step(ch) if by_chars is not None else None
            assert (state is None) == (by_chars is None), (name, text[:cut])
            if state is None:
                refused += 1
                continue
            mask = state.mask()
            assert np.array_equal(mask, admitted_by_text(by_chars, vocabulary)), (name, text[:cut])
            assert state.accepting == by_chars.accepting
            forced = state.forced()
            for token in np.flatnonzero(mask).tolist():
                piece = vocabulary.piece(token).decode()
                assert state.allows(token) and state.after(token) is not None
                assert piece.startswith(forced) or forced.startswith(piece), (name, forced, piece)
            if forced:
                assert state.advance(forced) is not None
            if state.finished:
                assert state.accepting and not mask.any()
                ended += 1
            eog = vocabulary.n_vocab - 1
            assert not state.allows(eog) and state.after(eog) is None  # an end is the decoder's call, by accepting
            checked += 1
    assert checked > 10
    assert refused > 0 or not name.startswith("graph"), "no changed reply was refused"
    assert ended > 0 or name in ("vocab", "cot/deps plan"), "no sampled reply reached a forced end"


def test_a_symbolic_plan_is_accepted_token_by_token_and_a_wrong_line_refused(kb, reply_grammars):
    vocabulary = PieceVocabulary()
    compiled = TokenMatcher(vocabulary).compile(reply_grammars["cot/deps plan"])
    text = render_plan(symbolic_planner(kb).plan(Goal(item="iron_pickaxe")).plan.steps)
    ids = {p: i for i, p in enumerate(vocabulary.pieces)}
    state = compiled.start()
    for ch in text:  # one token per character, as a model may write it
        state = state.after(ids[ch.encode()])
        assert state is not None
    assert state.accepting
    assert compiled.start().advance(text + "\ncraft 1 banana") is None


def test_an_unset_or_barsym_engine_setting_says_nothing(monkeypatch):
    for value in (None, "barsym", " Barsym "):
        if value is None:
            monkeypatch.delenv(ENGINE_ENV, raising=False)
        else:
            monkeypatch.setenv(ENGINE_ENV, value)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_engine_setting()


def test_the_removed_llguidance_engine_is_one_warning(monkeypatch):
    monkeypatch.setenv(ENGINE_ENV, "llguidance")
    with pytest.warns(RuntimeWarning, match="llguidance engine was removed.*barsym's own grammar matcher is used"):
        check_engine_setting()


def test_an_unknown_engine_is_refused_in_one_line_with_exit_2():
    """Checked before any model loads: one line, exit 2."""
    code = "import sys; from barsym.cli import main; sys.exit(main(['plan', 'stick', '--planner', 'bar', '--threads', '1']))"
    env = {**__import__("os").environ, ENGINE_ENV: "xgrammar"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "BARSYM_GRAMMAR_ENGINE=xgrammar" in lines[0] and "one grammar engine" in lines[0]


def llama_cpp_mask(backend, sampler) -> np.ndarray:
    """llama.cpp's grammar sampler applied to the whole vocabulary: True where it leaves a token's logit finite."""
    lc = backend._llama_cpp
    n = backend._model.n_vocab
    data = (lc.llama_token_data * n)(*[lc.llama_token_data(t, 0.0, 0.0) for t in range(n)])
    array = lc.llama_token_data_array(data, n, -1, False)
    lc.llama_sampler_apply(sampler, ctypes.byref(array))
    return np.array([np.isfinite(data[t].logit) for t in range(n)])


@pytest.mark.llm
@pytest.mark.parametrize("name", ["graph: stone_pickaxe", "cot/deps plan", "deps explanation"])
def test_on_the_real_vocabulary_the_masks_are_llama_cpps(smol, reply_grammars, kb, name):
    """Along a reply, token by token: the matcher admits exactly what llama.cpp's grammar sampler admits
    (end-of-generation tokens: where the state is accepting). In free text (DEPS' explanation) that includes
    SmolLM2's tokens longer than 64 bytes, which a short piece buffer once read as empty and refused."""
    grammar = reply_grammars[name]
    if name == "cot/deps plan":
        reply = render_plan(symbolic_planner(kb).plan(Goal(item="stone_pickaxe")).plan.steps)
    elif name == "deps explanation":
        reply = "A stone_pickaxe needs 3 cobblestone and 2 sticks: mine stone with a wooden_pickaxe first."
    else:
        reply = smol.complete([{"role": "user", "content": "Goal: 1 stone_pickaxe"}], grammar=grammar).text
    model, lc = smol._model, smol._llama_cpp
    eog = np.array([model.is_eog(t) for t in range(model.n_vocab)])
    state = TokenMatcher(model).compile(grammar).start()
    sampler = lc.llama_sampler_init_grammar(model.vocab, grammar.encode(), b"root")
    assert sampler
    try:
        tokens = model.tokenize(reply, add_bos=False, special=False)
        for token in [*tokens, None]:
            theirs = llama_cpp_mask(smol, sampler)
            assert np.array_equal(state.mask(), theirs & ~eog), (name, token)
            assert bool(theirs[eog].any()) == state.accepting
            if token is None:
                break
            lc.llama_sampler_accept(sampler, token)
            state = state.after(token)
            assert state is not None
        assert state.accepting
    finally:
        lc.llama_sampler_free(sampler)
