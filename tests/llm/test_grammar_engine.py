"""The grammar engines (barsym's matcher, llguidance) agree on barsym's reply grammars.

Walked over a small vocabulary of ASCII pieces (no model): at every prefix of sampled replies both
engines accept or refuse the same texts, say the same forced text, may end at the same places and
admit the same tokens. One test runs the session's real model with llguidance: same masks on
SmolLM2's 49k-token vocabulary, same reply as barsym's matcher.
"""

from __future__ import annotations

import random
import string
import subprocess
import sys

import numpy as np
import pytest

from barsym.llm.base import BackendUnavailableError
from barsym.llm.grammar_match import compile_grammar
from barsym.llm.llamacpp.grammar_engine import ENGINE_ENV, UnsupportedGrammar, make_engine, resolve_engine
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import Vocabulary, render_plan
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder
from barsym.reasoning.prompts import baseline_prompts, deps_prompts
from barsym.reasoning.scoring.step_scorer import SCORE_GRAMMAR

try:
    import llguidance  # noqa: F401

    HAS_LLGUIDANCE = True
except ImportError:
    HAS_LLGUIDANCE = False

needs_llguidance = pytest.mark.skipif(not HAS_LLGUIDANCE, reason="llguidance is not installed")

WORDS = ["craft", "smelt", "mine", " 1", " 2", " 3", "stick", " stick", "planks", " cobblestone", ", ", ": ", "\n"]
WORDS += ["_pickaxe", "iron", "_ingot", "stone", " c", "oal", "log", "s;", " inventory", "done"]


class PieceVocabulary:
    """Printable ASCII and a few multi-character pieces; the last token ends generation."""

    def __init__(self):
        self.pieces = [c.encode() for c in string.printable if c not in "\x0b\x0c"] + [w.encode() for w in WORDS]
        self.pieces.append(b"<|im_end|>")
        self.n_vocab = len(self.pieces)
        self.ids = {p: i for i, p in enumerate(self.pieces[:-1])}

    def piece(self, token: int, special: bool = True) -> bytes:
        return self.pieces[token]

    def is_eog(self, token: int) -> bool:
        return token == self.n_vocab - 1

    def tokenize(self, text: str, add_bos: bool, special: bool) -> list[int]:
        out, data, i = [], text.encode(), 0
        while i < len(data):
            piece = max((p for p in self.ids if data.startswith(p, i)), key=len)
            out.append(self.ids[piece])
            i += len(piece)
        return out


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
    """Replies walked character by character through barsym's matcher, and each with one character changed."""
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


def test_the_engine_is_chosen_by_name_or_environment(monkeypatch):
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert resolve_engine() == "barsym"
    monkeypatch.setenv(ENGINE_ENV, "llguidance")
    assert resolve_engine() == "llguidance" and resolve_engine("barsym") == "barsym"
    monkeypatch.setenv(ENGINE_ENV, "xgrammar")
    with pytest.raises(ValueError, match="one of barsym, llguidance"):
        resolve_engine()


def test_barsyms_engine_refuses_what_it_does_not_mirror():
    with pytest.raises(UnsupportedGrammar):
        make_engine("barsym", PieceVocabulary()).compile('root ::= [^"]+')


def test_llguidance_missing_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "llguidance", None)
    with pytest.raises(BackendUnavailableError, match=r"pip install 'barsym\[llguidance\]'"):
        make_engine("llguidance", PieceVocabulary())


def test_the_cli_says_so_in_one_line_and_exits_2(tmp_path):
    """Chosen but not installed (here: made unimportable): one line, exit 2, before any model loads."""
    code = (
        "import sys; sys.modules['llguidance'] = None; from barsym.cli import main; "
        "sys.exit(main(['plan', 'stick', '--planner', 'bar', '--threads', '1']))"
    )
    env = {**__import__("os").environ, ENGINE_ENV: "llguidance"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "llguidance" in lines[0] and "Traceback" not in done.stderr


@needs_llguidance
@pytest.mark.parametrize(
    "name",
    [
        "graph: stone_pickaxe",
        "graph: torch",
        "graph: iron_ingot x3",
        "vocab",
        "cot/deps plan",
        "deps explanation",
        "feedback",
        "value",
        "score",
    ],
)
def test_both_engines_accept_the_same_texts_force_the_same_text_and_admit_the_same_tokens(reply_grammars, name):
    vocabulary = PieceVocabulary()
    grammar = reply_grammars[name]
    ours = make_engine("barsym", vocabulary).compile(grammar)
    theirs = make_engine("llguidance", vocabulary).compile(grammar)
    rng = random.Random(name)
    checked = ended = 0
    for text in sampled_texts(grammar, rng, 4):
        for cut in sorted({0, len(text), *rng.sample(range(len(text) + 1), min(len(text) + 1, 12))}):
            a, b = ours.start().advance(text[:cut]), theirs.start().advance(text[:cut])
            assert (a is None) == (b is None), (name, text[:cut])
            if a is None or b is None:
                continue
            assert a.accepting == b.accepting, (name, text[:cut])
            assert a.finished == b.finished, (name, text[:cut])
            assert a.forced() == b.forced(), (name, text[:cut])
            assert np.array_equal(a.mask(), b.mask()), (name, text[:cut])
            token = int(np.flatnonzero(a.mask())[0]) if a.mask().any() else None
            if token is not None:  # token by token, as the span decoder advances
                assert (a.after(token) is None) == (b.after(token) is None)
                assert a.after(token).forced() == b.after(token).forced()
            checked += 1
            ended += a.finished
    assert checked > 10
    assert ended > 0 or name in ("vocab", "cot/deps plan"), "no sampled reply reached a forced end"


@needs_llguidance
def test_a_symbolic_plan_is_accepted_by_both(kb, reply_grammars):
    vocabulary = PieceVocabulary()
    text = render_plan(symbolic_planner(kb).plan(Goal(item="iron_pickaxe")).plan.steps)
    for engine in ("barsym", "llguidance"):
        grammar = make_engine(engine, vocabulary).compile(reply_grammars["cot/deps plan"])
        state = grammar.start().advance(text)
        assert state is not None, engine
        assert grammar.start().advance(text + "\ncraft 1 banana") is None, engine


@needs_llguidance
@pytest.mark.llm
def test_llguidance_on_the_real_vocabulary_gives_barsyms_masks_and_reply(smol, monkeypatch, reply_grammars):
    """SmolLM2's own vocabulary and the session model (no new load): same masks along a reply, same reply."""
    from barsym.llm.llamacpp.span_decoder import SpanDecoder

    grammar = reply_grammars["graph: stone_pickaxe"]
    ours = make_engine("barsym", smol._model).compile(grammar)
    theirs_engine = make_engine("llguidance", smol._model)
    theirs = theirs_engine.compile(grammar)
    messages = [{"role": "user", "content": "Goal: 1 stone_pickaxe"}]
    monkeypatch.setattr(smol, "prefix_cache", False)
    expected = smol.complete(messages, grammar=grammar, max_tokens=24)
    monkeypatch.setattr(smol, "_spans", SpanDecoder(smol._context, theirs_engine))
    got = smol.complete(messages, grammar=grammar, max_tokens=24)
    assert (got.text, got.completion_tokens, got.evaluations) == (
        expected.text,
        expected.completion_tokens,
        expected.evaluations,
    )
    a, b = ours.start(), theirs.start()
    for token in smol._model.tokenize(expected.text, add_bos=False, special=False):
        assert np.array_equal(a.mask(), b.mask()) and a.forced() == b.forced() and a.accepting == b.accepting
        assert a.finished == b.finished
        a, b = a.after(token), b.after(token)
        assert a is not None and b is not None
    assert a.accepting == b.accepting and a.finished == b.finished
