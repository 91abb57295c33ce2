"""The Python GBNF recogniser behind forced-span decoding (no model needed).

What forced-span decoding relies on: the text a grammar forces next, which
texts it admits, where it may end, and a refusal (UnsupportedGrammar) for
everything it does not mirror exactly, so those grammars go to llama.cpp.
"""

from __future__ import annotations

import pytest

from barsym.llm.grammar_match import UnsupportedGrammar, compile_grammar
from barsym.model import Goal
from barsym.planner.registry import graph_for
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder


def admits(grammar: str, text: str) -> bool:
    state = compile_grammar(grammar).start().advance(text)
    return state is not None and state.accepting


def test_forced_text_runs_to_the_first_choice():
    g = compile_grammar('root ::= "craft 1 stone_pickaxe: " ("1" | "2" | "3") " cobblestone"')
    start = g.start()
    assert start.forced() == "craft 1 stone_pickaxe: "
    after = start.advance(start.forced())
    assert after.forced() == "" and not after.accepting
    assert after.advance("4") is None
    three = after.advance("3")
    assert three.forced() == " cobblestone" and three.advance(" cobblestone").accepting


def test_forced_text_stops_where_the_grammar_may_end():
    g = compile_grammar('root ::= "mine 3 logs" (": layer " [1-3])?')
    start = g.start()
    assert start.forced() == "mine 3 logs"
    end = start.advance("mine 3 logs")
    assert end.accepting and end.forced() == ""  # ending is a choice: the model decides
    assert admits(g_text := 'root ::= "mine 3 logs" (": layer " [1-3])?', "mine 3 logs: layer 2")
    assert not admits(g_text, "mine 3 logs: layer 4")


@pytest.mark.parametrize(
    "grammar, good, bad",
    [
        ('root ::= [a-c]+ "!"', ["a!", "abcab!"], ["!", "ad!"]),
        ('root ::= "x" [0-9]* "y"', ["xy", "x123y"], ["x1", "xay"]),
        ('root ::= "ab"{2,3}', ["abab", "ababab"], ["ab", "abababab"]),
        (
            'root ::= item (", " item)?\nitem ::= "stick" | "stone" ("_axe")?',
            ["stick", "stone_axe, stick"],
            ["stone_", "stick,"],
        ),
        ('root ::= "say \\"hi\\"\\n"', ['say "hi"\n'], ["say hi"]),
    ],
)
def test_admitted_texts(grammar, good, bad):
    for text in good:
        assert admits(grammar, text), text
    for text in bad:
        assert not admits(grammar, text), text


def test_the_planners_grammars_are_mirrored(kb):
    builder = GrammarBuilder(kb, graph_for(kb))
    for goal in (Goal(item="stone_pickaxe"), Goal(item="iron_ingot", count=3), Goal(item="torch", count=4)):
        built = builder.for_goal(goal)
        start = compile_grammar(built.text).start()
        assert start.forced().startswith(("craft ", "smelt "))
    vocab = compile_grammar(builder.vocab()).start()
    assert vocab.advance("craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table").accepting


@pytest.mark.parametrize(
    "grammar",
    [
        'root ::= [^"]+',  # negated class: may match non-ASCII, left to llama.cpp
        "root ::= .",
        'root ::= "caf\\u00e9"',
        "root ::= missing",
        'root ::= root "a" | "b"',  # left recursion
        'item ::= "a"',  # no root
    ],
)
def test_what_is_not_mirrored_is_refused(grammar):
    with pytest.raises(UnsupportedGrammar):
        compile_grammar(grammar)
