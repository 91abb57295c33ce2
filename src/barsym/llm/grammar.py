"""Output constraints for the decomposition prompt: a GBNF grammar and a JSON schema.

The planner asks the model for one decomposition step at a time, as a JSON
object of this shape::

    {"step": {"type": "craft", "item": "stone_pickaxe", "count": 1, "tool": null},
     "subgoals": [{"item": "cobblestone", "count": 3}, {"item": "stick", "count": 2}]}

A 135M-parameter model cannot be trusted to emit valid JSON, let alone to use
real item names, so decoding is constrained.  Two forms are produced from the
same inputs:

* :func:`decomposition_grammar` returns GBNF text for llama.cpp (in-process via
  ``LlamaGrammar`` or the servers' ``grammar`` request field).  This is the
  authoritative form: it enforces the vocabulary, the ``1..999`` count range,
  the list bound and a fixed key order, and it leaves no room for unbounded
  whitespace (small models otherwise pad with newlines until ``max_tokens``).
* :func:`decomposition_schema` returns an equivalent JSON schema for servers
  that only understand ``response_format``.  Note that llama-cpp-python's own
  schema-to-grammar converter ignores ``minimum``/``maximum`` on integers, so
  the count range is only advisory there; re-check counts after parsing.

Vocabularies can hold ~1000 names.  Written as a flat alternation, every name
becomes a separate parser stack that llama.cpp tests against the whole token
vocabulary at each step, so the names are factored into a prefix tree
(``"s" ("tone" ("_axe" | "_pickaxe")? | "tick")``) which keeps the number of
live stacks near the number of distinct next characters.

Both functions are pure: same inputs, byte-identical output, so the grammar can
be cached or hashed by callers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..steps import COUNT_GBNF, GRAMMAR_MAX_COUNT

DEFAULT_STEP_TYPES: tuple[str, ...] = ("craft", "mine", "smelt", "kill", "dig_down")
MAX_COUNT = GRAMMAR_MAX_COUNT  # the step notation's (barsym.steps): what COUNT_GBNF admits

__all__ = [
    "DEFAULT_STEP_TYPES",
    "MAX_COUNT",
    "decomposition_grammar",
    "decomposition_schema",
    "decomposition_token_budget",
    "gbnf_literal",
    "gbnf_string_choice",
    "gbnf_word_choice",
    "lint_gbnf",
]


def gbnf_literal(text: str) -> str:
    """Quote ``text`` as a GBNF string literal, escaping what the parser would misread."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _clean_names(names: Iterable[str], what: str, *, allow_empty: bool = False) -> list[str]:
    """Validate a name list, drop duplicates (keeping first occurrence) and sort it.

    Sorting makes the output independent of the caller's iteration order, so
    two equal vocabularies always yield the same grammar text.
    """
    if isinstance(names, str):
        raise TypeError(f"{what} must be a list of strings, not a single string {names!r}")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what} must contain non-empty strings, got {name!r}")
        seen.add(name)
    if not seen and not allow_empty:
        raise ValueError(f"{what} must not be empty")
    return sorted(seen)


def _radix_alternation(words: Sequence[str]) -> str:
    """GBNF expression matching exactly ``words``, factored by shared prefixes.

    ``words`` must be non-empty and free of the empty string.  The result is a
    single expression (possibly parenthesised groups) that can be spliced into
    a rule body.
    """
    # Group by first character, then take the longest common prefix of each
    # group as one edge of the radix tree.
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word)
    alternatives = []
    for first in sorted(groups):
        group = groups[first]
        prefix = group[0]
        for word in group[1:]:
            i = 0
            while i < len(prefix) and i < len(word) and prefix[i] == word[i]:
                i += 1
            prefix = prefix[:i]
        rests = sorted({w[len(prefix) :] for w in group})
        ends_here = "" in rests
        rests = [r for r in rests if r]
        if not rests:
            alternatives.append(gbnf_literal(prefix))
            continue
        tail = _radix_alternation(rests)
        if ends_here:
            alternatives.append(f"{gbnf_literal(prefix)} ({tail})?")
        elif len(rests) == 1:
            alternatives.append(gbnf_literal(prefix + rests[0]))
        else:
            alternatives.append(f"{gbnf_literal(prefix)} ({tail})")
    return " | ".join(alternatives)


def gbnf_word_choice(values: Iterable[str]) -> str:
    """GBNF expression matching exactly one of ``values`` as bare text (no JSON quotes).

    For compact, non-JSON reply formats; prefix-factored like the JSON form.
    """
    return "(" + _radix_alternation(_clean_names(values, "values")) + ")"


def gbnf_string_choice(values: Iterable[str]) -> str:
    """GBNF expression for a JSON string literal whose content is one of ``values``.

    Values are JSON-escaped first, so names containing quotes or backslashes
    still produce the exact JSON text a parser expects.
    """
    encoded = [json.dumps(v, ensure_ascii=False)[1:-1] for v in _clean_names(values, "values")]
    return '"\\"" (' + _radix_alternation(encoded) + ') "\\""'


def decomposition_grammar(
    items: Iterable[str],
    step_types: Iterable[str] = DEFAULT_STEP_TYPES,
    tools: Iterable[str] = (),
    max_subgoals: int = 4,
) -> str:
    """GBNF grammar for one decomposition step (see the module docstring).

    ``items`` is the item vocabulary, used for both ``step.item`` and each
    subgoal's ``item``; ``tools`` may be empty, in which case ``tool`` can only
    be ``null``; ``max_subgoals`` bounds the subgoal list (0 forces ``[]``).
    Rule names use hyphens because llama.cpp's GBNF parser rejects ``_`` in
    identifiers.
    """
    if isinstance(max_subgoals, bool) or not isinstance(max_subgoals, int) or max_subgoals < 0:
        raise ValueError(f"max_subgoals must be an int >= 0, got {max_subgoals!r}")
    item_expr = gbnf_string_choice(_clean_names(items, "items"))
    type_expr = gbnf_string_choice(_clean_names(step_types, "step_types"))
    tool_names = _clean_names(tools, "tools", allow_empty=True)
    tool_expr = '"null"' + (" | " + gbnf_string_choice(tool_names) if tool_names else "")

    # Bounded list: ( sg ( "," ws sg ( ... )? )? )?  -- nested optionals rather
    # than the {m,n} operator, which older llama.cpp builds do not parse.
    subgoals = ""
    for _ in range(max_subgoals):
        subgoals = f'subgoal ("," ws {subgoals})?' if subgoals else "subgoal"
    list_body = f"({subgoals})?" if subgoals else ""

    rules = [
        'root ::= "{" ws "\\"step\\":" ws step "," ws "\\"subgoals\\":" ws subgoals ws "}"',
        'step ::= "{" ws "\\"type\\":" ws step-type "," ws "\\"item\\":" ws item ","'
        ' ws "\\"count\\":" ws count "," ws "\\"tool\\":" ws tool ws "}"',
        'subgoal ::= "{" ws "\\"item\\":" ws item "," ws "\\"count\\":" ws count ws "}"',
        f'subgoals ::= "[" ws {list_body + " ws " if list_body else ""}"]"',
        f"count ::= {COUNT_GBNF}",
        f"step-type ::= {type_expr}",
        f"tool ::= {tool_expr}",
        f"item ::= {item_expr}",
        'ws ::= " "?',
    ]
    return "\n".join(rules) + "\n"


def decomposition_token_budget(max_subgoals: int, item_tokens: int = 16) -> int:
    """A ``max_tokens`` large enough for any reply the grammar allows.

    Too small a budget is the usual way constrained output fails: generation
    stops mid-object and the JSON does not parse.  Sized from SmolLM2's
    tokenizer, where the worst reply (15-token item names, count 999) takes
    62 tokens with no subgoals plus 26 per subgoal; ``item_tokens`` is the
    longest item name in tokens, and each object gets room for the optional
    spaces the grammar allows.
    """
    if max_subgoals < 0 or item_tokens < 1:
        raise ValueError("max_subgoals must be >= 0 and item_tokens >= 1")
    return 40 + 2 * item_tokens + max_subgoals * (16 + item_tokens)


def decomposition_schema(
    items: Iterable[str],
    step_types: Iterable[str] = DEFAULT_STEP_TYPES,
    tools: Iterable[str] = (),
    max_subgoals: int = 4,
) -> dict[str, Any]:
    """JSON schema equivalent to :func:`decomposition_grammar` (same arguments).

    Use it with servers that take ``response_format`` but no GBNF, and to
    validate parsed replies.  Key order is given by ``required`` and
    ``properties`` order; converters that honour property order keep it.
    """
    if isinstance(max_subgoals, bool) or not isinstance(max_subgoals, int) or max_subgoals < 0:
        raise ValueError(f"max_subgoals must be an int >= 0, got {max_subgoals!r}")
    item_names = _clean_names(items, "items")
    type_names = _clean_names(step_types, "step_types")
    tool_names = _clean_names(tools, "tools", allow_empty=True)
    count = {"type": "integer", "minimum": 1, "maximum": MAX_COUNT}
    item = {"type": "string", "enum": item_names}
    tool: dict[str, Any] = {"type": "null"}
    if tool_names:
        tool = {"anyOf": [{"type": "null"}, {"type": "string", "enum": tool_names}]}
    step = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": type_names},
            "item": item,
            "count": count,
            "tool": tool,
        },
        "required": ["type", "item", "count", "tool"],
        "additionalProperties": False,
    }
    subgoal = {
        "type": "object",
        "properties": {"item": item, "count": count},
        "required": ["item", "count"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "step": step,
            "subgoals": {"type": "array", "items": subgoal, "maxItems": max_subgoals},
        },
        "required": ["step", "subgoals"],
        "additionalProperties": False,
    }


_GBNF_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+|\#[^\n]*)"""
    r"""|(?P<lit>"(?:\\.|[^"\\\n])*")"""
    r"""|(?P<cls>\[(?:\\.|[^\]\\\n])*\])"""
    r"""|(?P<define>::=)"""
    r"""|(?P<name>[a-zA-Z0-9-]+)"""
    r"""|(?P<rep>\{\s*\d*\s*(?:,\s*\d*\s*)?\})"""
    r"""|(?P<op>[()|?*+.])"""
)


def lint_gbnf(text: str) -> list[str]:
    """Best-effort static check of GBNF text; returns a list of problems (empty if none).

    llama.cpp servers built on llama-cpp-python 0.3.x crash (SIGSEGV) on a
    grammar their parser rejects, so the HTTP backend runs this before
    sending one.  It catches the common mistakes -- undefined or misspelt
    rules, a missing ``root``, ``_`` in rule names, unbalanced quotes or
    parentheses -- but is not a full parser (it reports the first lexical
    error only): passing it does not guarantee
    llama.cpp accepts the grammar.
    """
    problems: list[str] = []
    defined: dict[str, int] = {}
    referenced: dict[str, int] = {}
    depth = 0
    pos, line = 0, 1
    tokens: list[tuple[str, str, int]] = []
    while pos < len(text):
        m = _GBNF_TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            hint = " (rule names may use only letters, digits and '-')" if ch == "_" else ""
            if ch in '"[':
                hint = " (unterminated string or character class)"
            return [f"line {line}: unexpected {ch!r}{hint}"]
        kind = m.lastgroup or ""
        if kind != "space":
            tokens.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    for i, (kind, value, at) in enumerate(tokens):
        is_definition = i + 1 < len(tokens) and tokens[i + 1][0] == "define"
        if kind == "name" and is_definition:
            if depth:
                problems.append(f"line {at}: unbalanced parentheses before rule {value!r}")
                depth = 0
            defined.setdefault(value, at)  # llama.cpp lets a later definition win
        elif kind == "name":
            referenced.setdefault(value, at)
        elif value == "(":
            depth += 1
        elif value == ")":
            depth -= 1
            if depth < 0:
                problems.append(f"line {at}: unmatched ')'")
                depth = 0
    if depth:
        problems.append("unbalanced parentheses at end of grammar")
    if tokens and "root" not in defined:
        problems.append("no 'root' rule defined")
    if not tokens:
        problems.append("grammar is empty")
    for name, at in referenced.items():
        if name not in defined:
            problems.append(f"line {at}: rule {name!r} is used but never defined")
    return problems
