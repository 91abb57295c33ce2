"""A small GBNF recogniser in Python, so decoding can see where a grammar branches.

llama.cpp's grammar sampler answers one question per generated token: which
tokens of the 49k vocabulary may come next. It cannot say "the next 12
characters are forced", which is what lets :mod:`.llamacpp.span_decoder` append a
forced stretch in one batched evaluation instead of 12 decode steps. This
module answers that, and "may this token's text come next", for the grammars
barsym builds.

It mirrors llama.cpp's own design (``llama-grammar.cpp``): rules are lists of
alternatives, an alternative is a sequence of character sets and rule
references, groups and repetitions become generated rules, and a parse state
is a set of stacks whose tops are character sets (the empty stack means the
grammar may end here). Matching a text advances every stack character by
character. Transitions are memoised, so the few hundred states a reply visits
are computed once per grammar.

Deliberately limited to what makes the fast path *exactly* equal to
llama.cpp's: ASCII character sets only, no negated classes and no ``.``.
With those, a token holding any non-ASCII byte can never match in either
implementation, so both admit exactly the same tokens. Anything else raises
:class:`UnsupportedGrammar` and the caller uses llama.cpp's sampler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .grammar import GBNF_TOKEN

__all__ = ["CompiledGrammar", "GrammarState", "UnsupportedGrammar", "compile_grammar"]

MAX_FORCED = 512  # longest forced stretch returned at once
_MAX_DEPTH = 256  # rule nesting while expanding: deeper means left recursion


class UnsupportedGrammar(ValueError):
    """The grammar uses something this recogniser does not mirror exactly (or is malformed)."""


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}

# An element is ("c", ranges) -- ranges a tuple of (low, high) code points -- or ("r", rule index).
Element = tuple


def _unescape(body: str) -> list[str]:
    """The characters of a literal or class body, escapes resolved (a leading "\\" marks escaped ones)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            raise UnsupportedGrammar("dangling backslash")
        nxt = body[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(nxt)
        if width is not None:
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width:
                raise UnsupportedGrammar(f"short \\{nxt} escape")
            out.append("\\" + chr(int(digits, 16)))
            i += 2 + width
        elif nxt in _ESCAPES:
            out.append("\\" + _ESCAPES[nxt])
            i += 2
        else:
            raise UnsupportedGrammar(f"unknown escape \\{nxt}")
    return out


def _ascii(code: int) -> int:
    if code > 0x7F:
        raise UnsupportedGrammar("non-ASCII characters are left to llama.cpp's sampler")
    return code


class _Parser:
    """GBNF text -> rules (list of alternatives, each a tuple of elements)."""

    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = GBNF_TOKEN.match(text, pos)
            if m is None:
                raise UnsupportedGrammar(f"cannot read {text[pos : pos + 20]!r}")
            if m.lastgroup != "space":
                self.tokens.append((m.lastgroup or "", m.group()))
            pos = m.end()
        self.i = 0
        self.names: dict[str, int] = {}
        self.rules: list[list[tuple]] = []
        self.defined: set[int] = set()

    def rule_id(self, name: str) -> int:
        if name not in self.names:
            self.names[name] = len(self.rules)
            self.rules.append([])
        return self.names[name]

    def fresh(self, alternatives: list[tuple]) -> int:
        self.rules.append(alternatives)
        index = len(self.rules) - 1
        self.defined.add(index)
        return index

    def peek(self, offset: int = 0) -> tuple[str, str]:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else ("end", "")

    def at_rule_start(self) -> bool:
        return self.peek()[0] == "name" and self.peek(1)[0] == "define"

    def parse(self) -> tuple[list[list[tuple]], int]:
        while self.peek()[0] != "end":
            kind, name = self.peek()
            if not self.at_rule_start():
                raise UnsupportedGrammar(f"expected a rule definition at {name!r}")
            self.i += 2
            index = self.rule_id(name)
            self.rules[index] = self.alternatives(nested=False)
            self.defined.add(index)
        missing = [n for n, i in self.names.items() if i not in self.defined]
        if missing:
            raise UnsupportedGrammar(f"undefined rule {missing[0]!r}")
        if "root" not in self.names:
            raise UnsupportedGrammar("no root rule")
        return self.rules, self.names["root"]

    def alternatives(self, nested: bool) -> list[tuple]:
        alts = [self.sequence(nested)]
        while self.peek() == ("op", "|"):
            self.i += 1
            alts.append(self.sequence(nested))
        return alts

    def sequence(self, nested: bool) -> tuple:
        items: list[Element] = []
        while True:
            kind, value = self.peek()
            if kind == "end" or (kind == "op" and value in "|)") or (not nested and self.at_rule_start()):
                return tuple(items)
            primary = self.primary()
            kind, value = self.peek()
            if kind == "op" and value in "?*+":
                self.i += 1
                items += self.repeat(primary, {"?": (0, 1), "*": (0, None), "+": (1, None)}[value])
            elif kind == "rep":
                self.i += 1
                low, _, high = value.strip("{}").replace(" ", "").partition(",")
                lo = int(low or 0)
                hi = lo if "," not in value else (int(high) if high else None)
                items += self.repeat(primary, (lo, hi))
            else:
                items += primary

    def primary(self) -> list[Element]:
        kind, value = self.peek()
        self.i += 1
        if kind == "lit":
            chars = _unescape(value[1:-1])
            return [("c", ((_ascii(ord(c[-1])),) * 2,)) for c in chars]
        if kind == "cls":
            return [self.char_class(value[1:-1])]
        if kind == "name":
            return [("r", self.rule_id(value))]
        if (kind, value) == ("op", "("):
            alts = self.alternatives(nested=True)
            if self.peek() != ("op", ")"):
                raise UnsupportedGrammar("unbalanced parentheses")
            self.i += 1
            return [("r", self.fresh(alts))]
        if (kind, value) == ("op", "."):
            raise UnsupportedGrammar("'.' (any character) is left to llama.cpp's sampler")
        raise UnsupportedGrammar(f"unexpected {value!r}")

    def char_class(self, body: str) -> Element:
        if body.startswith("^"):
            raise UnsupportedGrammar("negated character classes are left to llama.cpp's sampler")
        chars = _unescape(body)
        ranges = []
        j = 0
        while j < len(chars):
            low = ord(chars[j][-1])
            if j + 2 < len(chars) and chars[j + 1] == "-":
                high = ord(chars[j + 2][-1])
                j += 3
            else:
                high = low
                j += 1
            ranges.append((_ascii(low), _ascii(high)))
        if not ranges:
            raise UnsupportedGrammar("empty character class")
        return ("c", tuple(ranges))

    def repeat(self, primary: list[Element], bounds: tuple[int, int | None]) -> list[Element]:
        """``x{lo,hi}`` as lo copies of x, then nested optionals (or a star rule when unbounded)."""
        lo, hi = bounds
        if len(primary) != 1:
            primary = [("r", self.fresh([tuple(primary)]))]
        out = primary * lo
        if hi is None:
            star = len(self.rules)
            self.fresh([(primary[0], ("r", star)), ()])
            return out + [("r", star)]
        tail: list[Element] = []
        for _ in range(hi - lo):
            tail = [("r", self.fresh([tuple(primary + tail), ()]))]
        return out + tail


Stack = tuple  # of (rule, alternative, position) frames, top last


@dataclass
class CompiledGrammar:
    """A parsed grammar plus the memo of its states and transitions."""

    rules: list[list[tuple]]
    root: int
    _expanded: dict[Stack, frozenset] = field(default_factory=dict, repr=False)
    _states: dict[frozenset, "GrammarState"] = field(default_factory=dict, repr=False)

    def start(self) -> "GrammarState":
        stacks = set()
        for alt in range(len(self.rules[self.root])):
            stacks |= self.expand(((self.root, alt, 0),), 0)
        return self.state_of(frozenset(stacks))

    def state_of(self, stacks: frozenset) -> "GrammarState":
        state = self._states.get(stacks)
        if state is None:
            state = self._states[stacks] = GrammarState(self, stacks)
        return state

    def expand(self, stack: Stack, depth: int) -> frozenset:
        """Stacks reachable from ``stack`` without reading a character, each topped by a character set."""
        known = self._expanded.get(stack)
        if known is not None:
            return known
        if depth > _MAX_DEPTH:
            raise UnsupportedGrammar("rules nest too deep (left recursion?)")
        if not stack:
            return frozenset({()})
        rule, alt, pos = stack[-1]
        body = self.rules[rule][alt]
        if pos == len(body):
            out = self.expand(stack[:-1], depth + 1)
        elif body[pos][0] == "c":
            out = frozenset({stack})
        else:
            below = stack[:-1] + (((rule, alt, pos + 1),) if pos + 1 < len(body) else ())  # tail calls drop the frame
            target = body[pos][1]
            found: set = set()
            for option in range(len(self.rules[target])):
                found |= self.expand(below + ((target, option, 0),), depth + 1)
            out = frozenset(found)
        self._expanded[stack] = out
        return out

    def top(self, stack: Stack) -> tuple:
        rule, alt, pos = stack[-1]
        return self.rules[rule][alt][pos][1]


class GrammarState:
    """Where a parse can be after some text; immutable and shared (interned per grammar)."""

    __slots__ = ("grammar", "stacks", "accepting", "_next", "_forced")

    def __init__(self, grammar: CompiledGrammar, stacks: frozenset):
        self.grammar = grammar
        self.stacks = stacks
        self.accepting = () in stacks  # the grammar may end here (an end-of-generation token is admissible)
        self._next: dict[str, GrammarState | None] = {}
        self._forced: str | None = None

    @property
    def dead(self) -> bool:
        return not self.stacks

    def step(self, ch: str) -> "GrammarState | None":
        """The state after one more character, or None if the grammar does not allow it."""
        if ch in self._next:
            return self._next[ch]
        code = ord(ch)
        grammar = self.grammar
        found: set = set()
        for stack in self.stacks:
            if not stack:
                continue
            if any(low <= code <= high for low, high in grammar.top(stack)):
                rule, alt, pos = stack[-1]
                found |= grammar.expand(stack[:-1] + ((rule, alt, pos + 1),), 0)
        state = grammar.state_of(frozenset(found)) if found else None
        self._next[ch] = state
        return state

    def advance(self, text: str) -> "GrammarState | None":
        """The state after ``text``, or None if some character of it is not allowed."""
        state: GrammarState | None = self
        for ch in text:
            state = state.step(ch)
            if state is None:
                return None
        return state

    def forced(self) -> str:
        """The text every continuation starts with: up to the first branch or possible end."""
        if self._forced is None:
            out: list[str] = []
            state = self
            while not state.accepting and len(out) < MAX_FORCED:
                chars = {ranges for ranges in (state.grammar.top(s) for s in state.stacks)}
                if len(chars) != 1:
                    break
                ranges = next(iter(chars))
                if len(ranges) != 1 or ranges[0][0] != ranges[0][1]:
                    break
                ch = chr(ranges[0][0])
                nxt = state.step(ch)
                if nxt is None:
                    break
                out.append(ch)
                state = nxt
            self._forced = "".join(out)
        return self._forced


def compile_grammar(text: str) -> CompiledGrammar:
    """Parse GBNF ``text``; :class:`UnsupportedGrammar` if it is outside the mirrored subset."""
    rules, root = _Parser(text).parse()
    grammar = CompiledGrammar(rules, root)
    grammar.start()  # expands every start stack: left recursion shows here, not mid-reply
    return grammar
