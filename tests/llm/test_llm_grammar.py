"""The GBNF building blocks, checked without a model.

A step-line grammar built from them uses no recursion, so it can be inlined
into one Python regular expression.  The translator below supports just the
subset the builders emit (literals, character classes, rule
references, groups, ``|`` and ``?``); it lets the tests check what the
grammar accepts and rejects, independently of llama.cpp.
"""

from __future__ import annotations

import re

import pytest

from barsym.llm.grammar import gbnf_literal, gbnf_word_choice, lint_gbnf
from barsym.steps import step_rules

TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])'
    r"|(?P<name>[a-zA-Z0-9-]+)|(?P<op>[()|?*+]))"
)


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    mapping = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"'}
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            if nxt == "x":
                out.append(chr(int(body[i + 2 : i + 4], 16)))
                i += 4
                continue
            out.append(mapping[nxt])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def gbnf_to_regex(grammar: str, rule: str = "root") -> str:
    """Inline a non-recursive GBNF grammar into one regex for ``rule``."""
    rules = {}
    for line in grammar.strip().splitlines():
        name, body = line.split("::=", 1)
        rules[name.strip()] = body.strip()

    def expand(name: str, depth: int = 0) -> str:
        assert depth < 50, "grammar unexpectedly recursive"
        out, pos, body = [], 0, rules[name]
        while pos < len(body):
            m = TOKEN.match(body, pos)
            assert m and m.end() > pos, f"cannot tokenise {body[pos:]!r}"
            pos = m.end()
            if m["lit"]:
                out.append(re.escape(_unescape(m["lit"])))
            elif m["cls"]:
                out.append(m["cls"])
            elif m["name"]:
                out.append("(?:" + expand(m["name"], depth + 1) + ")")
            elif m["op"] == "(":
                out.append("(?:")
            else:
                out.append(m["op"])
        return "".join(out)

    return expand(rule)


ITEMS = ["stone", "stone_pickaxe", "stone_axe", "stick", "oak_planks", "oak_log", "cobblestone"]
TOOLS = ["wooden_pickaxe", "stone_pickaxe"]


def matches(grammar: str, text: str) -> bool:
    return re.fullmatch(gbnf_to_regex(grammar), text) is not None


def step_grammar(items=ITEMS, tools=TOOLS) -> str:
    """One step line in BAR's notation over ``items``, as the forward planners build it."""
    return (
        "\n".join(
            [
                "root ::= step",
                *step_rules("step", ("mine", "craft", "smelt", "kill")),
                f"item ::= {gbnf_word_choice(items)}",
                f"toolname ::= {gbnf_word_choice(tools)}",
            ]
        )
        + "\n"
    )


def test_a_step_grammar_admits_the_notation_over_the_vocabulary():
    grammar = step_grammar()
    for good in ["craft 1 stone_pickaxe", "mine 3 cobblestone with wooden_pickaxe", "craft 999 stick", "dig down"]:
        assert matches(grammar, good), good
    for bad in [
        "craft 1 diamond",  # not in the vocabulary
        "craft 1 ston",  # a prefix of a name
        "craft 1 stone_pickaxes",  # an extension of a name
        "craft 0 stick",
        "craft 1000 stick",
        "craft 01 stick",
        "mine 1 stone with stone",  # an item, but not a tool
        "build 1 stick",
        "craft 1 stick\n",
    ]:
        assert not matches(grammar, bad), bad


def test_large_vocabulary_is_prefix_factored_and_exact():
    materials = ["wooden", "stone", "iron", "golden", "diamond", "netherite"]
    kinds = ["pickaxe", "axe", "shovel", "hoe", "sword", "helmet", "boots", "leggings"]
    items = [f"{m}_{k}" for m in materials for k in kinds] + [f"block_{i}" for i in range(1000)]
    text = gbnf_word_choice(items)
    flat_size = sum(len(i) + 5 for i in items)
    assert len(text) < flat_size  # shared prefixes are written once
    rx = re.compile(gbnf_to_regex(f"root ::= {text}\n"))
    for name in items[::37] + ["block_999", "block_0", "netherite_leggings"]:
        assert rx.fullmatch(name), name
    for name in ["block_1000", "block_", "iron", "iron_", "stone_pickaxe_"]:
        assert not rx.fullmatch(name), name


def test_output_is_deterministic_and_order_independent():
    assert gbnf_word_choice(ITEMS) == gbnf_word_choice(list(reversed(ITEMS)) + ["stick"])


def test_rule_names_are_valid_for_llama_cpp():
    # llama.cpp's GBNF parser accepts only [a-zA-Z0-9-] in rule names.
    names = [line.split("::=")[0].strip() for line in step_grammar().strip().splitlines()]
    assert "root" in names
    assert all(re.fullmatch(r"[a-zA-Z0-9-]+", n) for n in names)


def test_awkward_names_are_escaped():
    names = ['say "hi"', "back\\slash", "tab\there", "caf\u00e9"]
    rx = re.compile(gbnf_to_regex(f"root ::= {gbnf_word_choice(names)}\n"))
    for name in names:
        assert rx.fullmatch(name)
    assert gbnf_literal('a"b\\c\n') == '"a\\"b\\\\c\\n"'


@pytest.mark.parametrize(
    "names, message",
    [([], "values must not be empty"), ("stick", "not a single string"), (["stick", ""], "non-empty strings")],
)
def test_invalid_names_are_explained(names, message):
    with pytest.raises((ValueError, TypeError), match=message):
        gbnf_word_choice(names)


def test_lint_accepts_generated_and_typical_grammars():
    assert lint_gbnf(step_grammar()) == []
    assert lint_gbnf('root ::= "a"{1,3} . x # comment\nx ::= [^"\\\\] | ( "b" )*\n') == []


@pytest.mark.parametrize(
    "text, problem",
    [
        ('root ::= "a" | missing', "'missing' is used but never defined"),
        ('root ::= item_name\nitem_name ::= "x"', "only letters, digits and '-'"),
        ('start ::= "a"', "no 'root' rule"),
        ('root ::= ("a"', "unbalanced parentheses"),
        ('root ::= "a")', "unmatched ')'"),
        ('root ::= "abc', "unterminated string"),
        ("", "empty"),
    ],
)
def test_lint_reports_common_mistakes(text, problem):
    problems = lint_gbnf(text)
    assert any(problem in p for p in problems), problems
