"""GBNF building blocks for the reply grammars, and a static check of GBNF text.

The planners' grammars (:mod:`barsym.reasoning.grammars.reply_grammar`, the forward
planners' :class:`~barsym.reasoning.grammars.forward_plans.Vocabulary`, the prose
parser) are written in the step notation of :mod:`barsym.steps`; what they
share is here: quoting a literal (:func:`gbnf_literal`), a choice among
~1000 item names (:func:`gbnf_word_choice`) and :func:`lint_gbnf`.

Vocabularies can hold ~1000 names.  Written as a flat alternation, every name
becomes a separate parser stack that llama.cpp tests against the whole token
vocabulary at each step, so the names are factored into a prefix tree
(``"s" ("tone" ("_axe" | "_pickaxe")? | "tick")``) which keeps the number of
live stacks near the number of distinct next characters.  Same inputs,
byte-identical output, so a grammar can be cached or hashed by callers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["gbnf_literal", "gbnf_word_choice", "lint_gbnf"]


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

    Prefix-factored (see the module docstring); names are sorted and deduplicated first.
    """
    return "(" + _radix_alternation(_clean_names(values, "values")) + ")"


#: one GBNF token (the lexer of lint_gbnf and of the matcher in :mod:`.grammar_match`)
GBNF_TOKEN = re.compile(
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
        m = GBNF_TOKEN.match(text, pos)
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
