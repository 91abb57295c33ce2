"""Grammar and schema builders, checked without a model.

The GBNF produced by ``decomposition_grammar`` uses no recursion, so it can be
inlined into one Python regular expression.  The translator below supports
just the subset the builder emits (literals, character classes, rule
references, groups, ``|`` and ``?``); it lets the tests check what the
grammar accepts and rejects, independently of llama.cpp.
"""

from __future__ import annotations

import json
import re

import pytest

from barsym.llm.grammar import (
    DEFAULT_STEP_TYPES,
    decomposition_grammar,
    decomposition_schema,
    decomposition_token_budget,
    gbnf_literal,
    gbnf_string_choice,
    lint_gbnf,
)

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


def reply(item="stone_pickaxe", count=1, tool="null", subgoals=(), typ="craft") -> str:
    tool_json = tool if tool == "null" else json.dumps(tool)
    subs = ", ".join(f'{{"item": "{i}", "count": {c}}}' for i, c in subgoals)
    return (
        f'{{"step": {{"type": "{typ}", "item": "{item}", "count": {count}, "tool": {tool_json}}},'
        f' "subgoals": [{subs}]}}'
    )


@pytest.fixture(scope="module")
def grammar() -> str:
    return decomposition_grammar(ITEMS, DEFAULT_STEP_TYPES, TOOLS, max_subgoals=3)


def test_accepts_well_formed_replies(grammar):
    assert matches(grammar, reply())
    assert matches(grammar, reply("stick", 4, "wooden_pickaxe", [("oak_planks", 2)]))
    assert matches(grammar, reply("stone", 999, subgoals=[("stick", 1)] * 3, typ="dig_down"))
    compact = reply().replace(": ", ":").replace(", ", ",")
    assert matches(grammar, compact)
    assert json.loads(reply("cobblestone", 3, subgoals=[("stone", 3)]))


@pytest.mark.parametrize(
    "bad",
    [
        reply(item="diamond"),  # not in vocabulary
        reply(item="ston"),  # prefix of a name
        reply(item="stone_pickaxes"),  # extension of a name
        reply(count=0),
        reply(count=1000),
        reply(count="01"),
        reply(tool="stone"),  # item, but not a tool
        reply(typ="build"),
        reply(subgoals=[("stick", 1)] * 4),  # more than max_subgoals
        reply(subgoals=[("gold", 1)]),
        reply() + "\n",  # trailing junk
        reply().replace('"step": ', '"step":   '),  # unbounded whitespace
    ],
)
def test_rejects_malformed_replies(grammar, bad):
    assert not matches(grammar, bad)


def test_large_vocabulary_is_prefix_factored_and_exact():
    materials = ["wooden", "stone", "iron", "golden", "diamond", "netherite"]
    kinds = ["pickaxe", "axe", "shovel", "hoe", "sword", "helmet", "boots", "leggings"]
    items = [f"{m}_{k}" for m in materials for k in kinds] + [f"block_{i}" for i in range(1000)]
    text = gbnf_string_choice(items)
    flat_size = sum(len(i) + 5 for i in items)
    assert len(text) < flat_size  # shared prefixes are written once
    rx = re.compile(gbnf_to_regex(f"root ::= {text}\n"))
    for name in items[::37] + ["block_999", "block_0", "netherite_leggings"]:
        assert rx.fullmatch(json.dumps(name)), name
    for name in ["block_1000", "block_", "iron", "iron_", "stone_pickaxe_"]:
        assert not rx.fullmatch(json.dumps(name)), name


def test_output_is_deterministic_and_order_independent():
    a = decomposition_grammar(ITEMS, tools=TOOLS, max_subgoals=2)
    b = decomposition_grammar(list(reversed(ITEMS)) + ["stick"], tools=TOOLS[::-1], max_subgoals=2)
    assert a == b


def test_rule_names_are_valid_for_llama_cpp():
    # llama.cpp's GBNF parser accepts only [a-zA-Z0-9-] in rule names.
    text = decomposition_grammar(ITEMS, tools=TOOLS)
    names = [line.split("::=")[0].strip() for line in text.strip().splitlines()]
    assert "root" in names
    assert all(re.fullmatch(r"[a-zA-Z0-9-]+", n) for n in names)


def test_zero_subgoals_and_no_tools():
    g = decomposition_grammar(["stick"], tools=[], max_subgoals=0)
    assert matches(g, reply("stick"))
    assert not matches(g, reply("stick", subgoals=[("stick", 1)]))
    assert not matches(g, reply("stick", tool="wooden_pickaxe"))


def test_awkward_names_are_escaped():
    names = ['say "hi"', "back\\slash", "tab\there", "caf\u00e9"]
    rx = re.compile(gbnf_to_regex(f"root ::= {gbnf_string_choice(names)}\n"))
    for name in names:
        assert rx.fullmatch(json.dumps(name, ensure_ascii=False))
    assert gbnf_literal('a"b\\c\n') == '"a\\"b\\\\c\\n"'


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"items": []}, "items must not be empty"),
        ({"items": "stick"}, "not a single string"),
        ({"items": ["stick", ""]}, "non-empty strings"),
        ({"items": ["stick"], "step_types": []}, "step_types must not be empty"),
        ({"items": ["stick"], "max_subgoals": -1}, "max_subgoals"),
        ({"items": ["stick"], "max_subgoals": True}, "max_subgoals"),
    ],
)
def test_invalid_arguments_are_explained(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        decomposition_grammar(**kwargs)
    with pytest.raises((ValueError, TypeError), match=message):
        decomposition_schema(**kwargs)


def test_schema_mirrors_grammar():
    schema = decomposition_schema(ITEMS, tools=TOOLS, max_subgoals=3)
    step = schema["properties"]["step"]["properties"]
    assert step["item"]["enum"] == sorted(set(ITEMS))
    assert step["type"]["enum"] == sorted(DEFAULT_STEP_TYPES)
    assert step["count"] == {"type": "integer", "minimum": 1, "maximum": 999}
    assert step["tool"]["anyOf"][1]["enum"] == sorted(TOOLS)
    assert schema["properties"]["subgoals"]["maxItems"] == 3
    assert schema["required"] == ["step", "subgoals"]
    assert decomposition_schema(["stick"])["properties"]["step"]["properties"]["tool"] == {"type": "null"}
    json.dumps(schema)  # plain JSON, ready for response_format


def test_lint_accepts_generated_and_typical_grammars():
    assert lint_gbnf(decomposition_grammar(ITEMS, tools=TOOLS)) == []
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


def test_token_budget_grows_with_the_list():
    budgets = [decomposition_token_budget(k) for k in range(6)]
    assert budgets == sorted(budgets) and budgets[0] >= 62
    with pytest.raises(ValueError):
        decomposition_token_budget(-1)
