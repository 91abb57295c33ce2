"""Stand-ins: backends that answer under the planner's grammar with no model at all.

A table where ``bar`` equals ``symbolic`` says nothing about the model unless
it also shows what a chooser with no model gets under the same grammar and the
same prompt. Each stand-in here is an :class:`~.base.LLMBackend`, so any LLM
planner runs with it unchanged (``--llm-stand-in NAME``), and its rows sit
beside the model's:

- ``first``: always the first admitted continuation.
- ``random``: uniform among the admitted continuations, seeded by the seed and
  the prompt (the same prompt gets the same reply in any process, in any order).
- ``largest``: the largest count offered, else the first option. It reads no
  prompt: where it matches the model, the grammar holds the answer.
- ``copy-facts``: copies the prompt's facts line (``Known: craft 1 stone_pickaxe
  (...) needs 3 cobblestone, 2 stick, 1 crafting_table.``, see
  :mod:`barsym.reasoning.prompts.facts`) where the grammar admits it, else as ``first``.

**The unit of choice is a word with the boundary after it.** The grammar is
walked with barsym's recogniser (:mod:`.grammar_match`); from the current state
every admitted continuation is enumerated up to and including the first
character that is not a letter, digit or ``_`` (a space, ``,``, ``:``, ``;``,
a newline), or up to a point where the reply may end. So the options at one
point are whole words -- ``"3 "``, ``"cobblestone,"``, ``"stick\\n"`` -- never
single characters: a character chooser would be judged on the grammar's
prefix tree of names (``s`` -> ``t`` -> ``i`` ...), not on a decision anyone
makes. Where only one option is admitted there is no choice and the text is
taken as it is, so the choosers differ only at the grammar's branch points.
Options are ordered by their text (code point order), the end of the reply
last; that order is what ``first`` means. A word is at most :data:`MAX_WORD`
characters and one point offers at most :data:`MAX_OPTIONS` options (the vocab
grammar's ~900 names with their boundaries fit); a reply is at most
``max_tokens`` x :data:`CHARS_PER_TOKEN` characters, then it stops with
``finish_reason="length"`` as a model cut off would.

Grammars outside the recogniser's subset (:class:`.grammar_match.UnsupportedGrammar`)
and calls without a grammar raise :class:`~.base.LLMError`: a stand-in has
nothing to choose from without one, and planning under a model's name would mislead.
"""

from __future__ import annotations

import json
import random
import re
import time
import zlib
from collections.abc import Callable

from .base import Completion, CompletionRequest, LLMBackend, LLMError, LLMOptions
from .grammar_match import CompiledGrammar, GrammarState, UnsupportedGrammar, compile_grammar
from .settings import STAND_INS
from .time_limit import out_of_time

__all__ = ["STAND_INS", "StandInLLM", "continuations", "facts_candidates", "make_stand_in"]

MAX_WORD = 64
MAX_OPTIONS = 20000
CHARS_PER_TOKEN = 6
END = None  # the option "the reply ends here"

_WORD = re.compile(r"[A-Za-z0-9_]")


def _is_word(ch: str) -> bool:
    return bool(_WORD.match(ch))


def _next_chars(state: GrammarState) -> list[str]:
    """The characters the grammar admits next, in code point order."""
    grammar = state.grammar
    codes: set[int] = set()
    for stack in state.stacks:
        if stack:
            for low, high in grammar.top(stack):
                codes.update(range(low, high + 1))
    return [chr(c) for c in sorted(codes)]


def continuations(state: GrammarState) -> list[str | None]:
    """Every admitted unit from ``state`` (see the module docstring), sorted; ``None`` (end) last."""
    found: list[str] = []

    def walk(at: GrammarState, text: str) -> None:
        if len(found) >= MAX_OPTIONS:
            return
        if text and at.accepting:
            found.append(text)
        for ch in _next_chars(at):
            nxt = at.step(ch)
            if nxt is None:
                continue
            if not _is_word(ch) or len(text) + 1 >= MAX_WORD:
                found.append(text + ch)
            else:
                walk(nxt, text + ch)

    walk(state, "")
    options: list[str | None] = sorted(set(found))
    if state.accepting:
        options.append(END)
    return options


# --------------------------------------------------------------------------- choosers

Chooser = Callable[[str, list, GrammarState, random.Random], "str | None"]


def _number(option: str | None) -> int | None:
    if option is None:
        return None
    digits = option.rstrip(" ,:;\n")
    return int(digits) if digits.isdigit() else None


def choose_first(text: str, options: list, state: GrammarState, rng: random.Random) -> str | None:
    return options[0]


def choose_random(text: str, options: list, state: GrammarState, rng: random.Random) -> str | None:
    return options[rng.randrange(len(options))]


def choose_largest(text: str, options: list, state: GrammarState, rng: random.Random) -> str | None:
    counts = [(n, -i) for i, option in enumerate(options) if (n := _number(option)) is not None]
    return options[-max(counts)[1]] if counts else options[0]


def facts_candidates(prompt: str) -> list[str]:
    """The replies a facts line spells out, one per way (``"craft 1 stick: 2 planks"``), first way first.

    ``Known: W1; or W2.`` -- each way ``HEAD [(detail)] needs N1, N2`` (or
    ``needs nothing``), or as BAR's goal message writes it, ``HEAD: N1, N2`` (or ``HEAD``);
    a need ``2 coal or charcoal`` gives its first name.
    """
    lines = [line for line in prompt.splitlines() if line.startswith("Known: ")]
    out: list[str] = []
    for line in lines:
        body = line[len("Known: ") :].rstrip(".")
        for way in body.split("; or "):
            way = re.sub(r" \([^)]*\)", "", way)
            head, _, needs = way.partition(" needs " if " needs " in way else ": ")
            subgoals = (
                [] if needs.strip() in ("", "nothing") else [n.split(" or ")[0].strip() for n in needs.split(", ")]
            )
            out.append(head.strip() + (": " + ", ".join(subgoals) if subgoals else ""))
    return out


_PLAN_FACTS = "Known, in the order a plan can use it:"


def facts_plan_lines(prompt: str) -> list[str]:
    """The steps a forward planner's facts list spells out, in order (``- mine 3 logs needs nothing`` -> ``mine 3 logs``)."""
    if _PLAN_FACTS not in prompt:
        return []
    lines = []
    for line in prompt.split(_PLAN_FACTS, 1)[1].splitlines()[1:]:
        if not line.startswith("- "):
            break
        lines.append(re.split(r" \(| needs | goes ", line[2:], maxsplit=1)[0].strip())
    return lines


def _segments(candidates: list[str]) -> list[str]:
    """The pieces of the candidate replies a grammar may order differently: the head and each subgoal, or each line."""
    out: list[str] = []
    for reply in candidates:
        head, _, rest = reply.partition(": ")
        for piece in [head, *(rest.split(", ") if rest else [])]:
            if piece not in out:
                out.append(piece)
    return out


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _piece(text: str, start: int) -> str:
    """The subgoal or line of ``text`` that begins at ``start`` (it ends at the next ``,``, ``:``, ``;`` or newline)."""
    return re.split(r"[,:;\n]", text[start:])[0].strip()


class _CopyFacts:
    """``copy-facts``: the option that keeps the reply closest to what the facts spell out.

    First by the whole reply: an option after which the reply (with the text
    the grammar then forces) is still the start of a candidate, the earliest
    way's candidate first. Where no candidate fits any more (the grammar orders
    the subgoals otherwise), by the piece being written against the candidates'
    pieces, an earlier way's first. The forced text counts with the option, so
    a count is chosen by the item it is for.
    """

    def __init__(self, prompt: str, backward: bool = False):
        self.candidates = facts_candidates(prompt)
        self.segments = _segments(self.candidates)
        self.lines = facts_plan_lines(prompt)  # DEPS' and CoT's facts: the plan's steps in order
        if backward:  # the worked example wrote its plan last step first (a backward chain): copy the same way
            self.lines.reverse()

    def __call__(self, text: str, options: list, state: GrammarState, rng: random.Random) -> str | None:
        if self.lines and not self.candidates:
            return self._forward(text, options, state)
        if not self.candidates:
            return options[0]
        start = max((text.rfind(ch) for ch in ",:;\n"), default=-1) + 1
        none = len(self.candidates)
        best, best_key = options[0], None
        for index, option in enumerate(options):
            if option is None:  # ending is right where a candidate ends
                fits = next((i for i, c in enumerate(self.candidates) if c == text), none)
                key = (-fits, 0, 0, -index)
            else:
                nxt = state.advance(option)
                ahead = text + option + (nxt.forced() if nxt is not None else "")
                fits = next((i for i, c in enumerate(self.candidates) if c.startswith(ahead)), none)
                piece = _piece(ahead, start)
                local = max(
                    (_common(piece, s) if len(piece) <= len(s) or not s.startswith(piece) else len(s), -i)
                    for i, s in enumerate(self.segments)
                )
                key = (-fits, local[0], local[1], -index)
            if best_key is None or key > best_key:
                best, best_key = option, key
        return best

    def _forward(self, text: str, options: list, state: GrammarState) -> str | None:
        """A plan written forward, a line per step: line N copies the facts' step N, then ``done``.

        Only the step is copied; what a line says after it (CoT's ``; inventory: ...``) is left to ``first``.
        """
        number = text.count("\n")
        target = self.lines[number] if number < len(self.lines) else "done"
        line = text[text.rfind("\n") + 1 :]
        if ";" in line or line == target:
            return self._end_line(options)
        if not target.startswith(line):
            # the line has left the step (free text, as DEPS' explanation): no option can fit it again, so
            # ending the reply (None) wins where the grammar allows it, else the first option, as the scores
            # below would choose, taken without walking the options (~0.4 s a character in an explanation)
            return None if None in options else options[0]
        best, best_key = options[0], None
        for index, option in enumerate(options):
            if option is None:
                key = (0, -index)
            else:
                nxt = state.advance(option)
                ahead = re.split(r"[;\n]", line + option + (nxt.forced() if nxt is not None else ""))[0]
                ends = option[-1:] in ("\n", ";")
                fits = target.startswith(ahead) and (not ends or ahead == target)
                key = (_common(ahead, target) if fits else -1, -index)
            if best_key is None or key > best_key:
                best, best_key = option, key
        return best

    @staticmethod
    def _end_line(options: list) -> str | None:
        """Past the copied step: the shortest way to the next line (a new line or ``;`` first, else the first)."""
        for wanted in ("\n", ";"):
            for option in options:
                if option is not None and option.endswith(wanted):
                    return option
        return options[0]


def _last_facts_prompt(messages: list[dict[str, str]]) -> str:
    """The latest user message carrying a facts line (a retry's own message has none), else the last one."""
    users = [m["content"] for m in messages if m.get("role") == "user"]
    for content in reversed(users):
        if "\nKnown: " in content or content.startswith("Known: ") or _PLAN_FACTS in content:
            return content
    return users[-1] if users else ""


def _example_backward(messages: list[dict[str, str]]) -> bool:
    """Whether the first worked example answers its facts' plan last step first (Reverse Chain's chain).

    The stand-in copies the facts the way the prompt's own example copied them: a
    forward planner's example lists the facts' steps in order, a backward chain's
    example from the goal's step back to the first one.
    """
    for asked, answered in zip(messages, messages[1:]):
        if asked.get("role") == "user" and answered.get("role") == "assistant" and _PLAN_FACTS in asked["content"]:
            lines = facts_plan_lines(asked["content"])
            reply = [line.split(";")[0].strip() for line in answered["content"].splitlines() if line.strip()]
            return len(lines) > 1 and bool(reply) and reply[0] == lines[-1] and reply[0] != lines[0]
    return False


#: the context a stand-in declares: larger than any prompt barsym writes (it has no window)
UNBOUNDED_CONTEXT = 1 << 20


class StandInLLM(LLMBackend):
    """A backend that walks the grammar with a chooser instead of a model (see the module docstring)."""

    def __init__(self, name: str, options: LLMOptions | None = None):
        if name not in STAND_INS:
            raise ValueError(f"unknown stand-in {name!r}; choose one of {', '.join(STAND_INS)}")
        # no context window: a chooser reads every prompt whole, so a planner that fits its dialogue to the
        # backend's context (DEPS) must not drop rounds, or stop as "context full", on a stand-in's account
        super().__init__(options or LLMOptions(n_ctx=UNBOUNDED_CONTEXT))
        self.name = name
        self._grammars: dict[str, CompiledGrammar] = {}
        self._continued: dict[GrammarState, list] = {}  # states are interned per grammar: enumerate each once

    @property
    def stand_in_name(self) -> str:
        """Which chooser answers (how outputs name what ran: :mod:`barsym.llm.provenance`)."""
        return self.name

    def _compiled(self, grammar: str) -> CompiledGrammar:
        compiled = self._grammars.get(grammar)
        if compiled is None:
            if len(self._grammars) > 256:
                self._grammars.clear()
                self._continued.clear()
            try:
                compiled = self._grammars[grammar] = compile_grammar(grammar)
            except UnsupportedGrammar as exc:
                raise LLMError(f"the {self.name} stand-in cannot walk this grammar: {exc}") from None
        return compiled

    def execute(self, request: CompletionRequest) -> Completion:
        messages, grammar, seed, stop = request.messages, request.grammar, request.seed, request.stop
        if grammar is None:
            raise LLMError(f"the {self.name} stand-in needs a grammar to choose under; this call gave none")
        started = time.perf_counter()
        prompt = _last_facts_prompt(messages)
        chooser: Chooser = {"first": choose_first, "random": choose_random, "largest": choose_largest}.get(
            self.name
        ) or _CopyFacts(prompt, backward=_example_backward(messages))
        key = json.dumps(messages, sort_keys=True).encode("utf-8")
        rng = random.Random(zlib.crc32(key) ^ (seed * 2654435761 % 2**32))
        text, finish, choices = self._walk(
            self._compiled(grammar).start(), chooser, rng, request.max_tokens * CHARS_PER_TOKEN
        )
        if stop:
            cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
            if cut >= 0:
                text, finish = text[:cut], "stop"
        return Completion(
            text=text,
            prompt_tokens=sum(len(m["content"].split()) for m in messages),
            completion_tokens=choices,
            finish_reason=finish,
            elapsed_s=time.perf_counter() - started,
            model=f"stand-in:{self.name}",
            evaluations=0,
        )

    def _continuations(self, state: GrammarState) -> list:
        found = self._continued.get(state)
        if found is None:
            found = self._continued[state] = continuations(state)
        return found

    def _walk(self, state: GrammarState, chooser: Chooser, rng: random.Random, limit: int) -> tuple[str, str, int]:
        """(reply, finish reason, choices made): forced text taken as is, a chooser at every branch point."""
        text, choices = "", 0
        while len(text) < limit:
            if out_of_time():  # a caller's deadline (time_limit): as if the reply reached max_tokens
                return text, "length", choices
            forced = state.forced()
            if forced:
                text += forced
                state = state.advance(forced)
                continue
            options = self._continuations(state)
            if not options:
                return text, "stop", choices
            if len(options) == 1:
                pick = options[0]
            else:
                pick = chooser(text, options, state, rng)
                choices += 1
            if pick is None:
                return text, "stop", choices
            text += pick
            state = state.advance(pick)
        return text[:limit], "length", choices


def make_stand_in(name: str, options: LLMOptions | None = None) -> StandInLLM:
    """The stand-in called ``name`` (ValueError names the known ones)."""
    return StandInLLM(name, options)
