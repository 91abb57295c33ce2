"""The clauses of a plan written in prose: how a text is cut into them, their counts in words, the limits on
what is read, and what a parse returns (:class:`Clause`, :class:`ParsedPlan`).

Split from :mod:`.parser` (the model's side: the prompt, the grammars and the calls) along that seam: what
is here asks no model, so it is read and tested without one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ... import steps as notation
from ...model import Plan, Step
from ...planner.stats import LLMStats

MAX_CLAUSES = 200
#: the longest clause read: a step in words is a few dozen characters
MAX_CLAUSE_CHARS = 1000

UNITS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "dozen": 12,
    "pair": 2,
    "couple": 2,
    "both": 2,
}
_SPLIT = re.compile(r"[.;!?\n]+|,|\b(?:and then|after that|afterwards|then|next|finally|and)\b")
_FILLER = re.compile(
    r"^(?:first(?:ly)?|now|lastly|at last|to start|you|we|i|should|will|need to|have to|"
    r"must|can|go|please|of|the|some|more|also|\s)+\b"
)
#: words that name no item (left out before names are matched: "the" is close to "tnt")
STOP_WORDS = frozenset(
    "the of into to from for with some more all them it its your my our their this that those "
    "these out up down get make made craft crafted mine mined use using by a an ok so "
    "hello hi hey there here thanks thank please done finished good luck enjoy place placed build built "
    "put set".split()
)


#: the verb a sentence says, by the kind of step it names: "cook the iron" is a smelt, "harvest iron" a mine.
#: Ordinary English for each of barsym's step kinds; a clause whose verb is none of these ("make", "get")
#: leaves the names' order to their closeness alone.
VERB_WORDS = {
    "mine": frozenset("mine mined mining dig digging harvest collect gather chop cut punch break quarry".split()),
    "smelt": frozenset("smelt smelted smelting cook cooked fire bake roast".split()),
}


#: words a clause may start with before its verb ("ok so first collect 3 wood", "then you mine ...")
_BEFORE_VERB = frozenset(
    "ok so first firstly now next then finally lastly also again please you we i should will "
    "need to have must can go and".split()
)


def verb_of(words: list[str]) -> str | None:
    """The step kind the clause's verb says (:data:`VERB_WORDS`), or None: the verb is the first word past
    the openers, so a name's part is never read as one ("craft a fire charge" is not a smelt)."""
    for word in words:
        if word in _BEFORE_VERB:
            continue
        return next((verb for verb, said in VERB_WORDS.items() if word in said), None)
    return None


def count_of(words: list[str]) -> tuple[int | None, list[str]]:
    """The clause's count (digits or words: "twenty four", "a dozen") and its words without it."""
    for i, word in enumerate(words):
        if word.isdigit():  # a count past any step's (thousands of digits: int() refuses them) is read as too many
            value = int(word) if len(word) <= len(str(notation.MAX_COUNT)) else notation.MAX_COUNT + 1
            return value, words[:i] + words[i + 1 :]
        if word in UNITS and word not in ("a", "an", "both"):
            value, j = UNITS[word], i + 1
            if value >= 20 and j < len(words) and UNITS.get(words[j], 99) < 10:
                value, j = value + UNITS[words[j]], j + 1
            if word in ("dozen", "pair", "couple") and i > 0 and words[i - 1] in ("a", "an"):
                return value, words[: i - 1] + words[j:]
            return value, words[:i] + [w for w in words[j:] if w != "of"]
    for i, word in enumerate(words):
        if word in ("a", "an"):
            return 1, words[:i] + words[i + 1 :]
    return None, words


def split_clauses(text: str) -> list[str]:
    """The clauses of a prose plan, in order (each should be one step), every one of them: a text of more than
    :data:`MAX_CLAUSES` is refused by :meth:`ProseParser.parse`, never cut short."""
    out = []
    for piece in _SPLIT.split(text.lower()):
        piece = re.sub(r"[^a-z0-9_' -]+", " ", piece or "")
        piece = _FILLER.sub("", piece.strip()).strip()
        if piece:
            out.append(piece)
    return out


class ProseLimitError(ValueError):
    """A text past what ``barsym parse`` reads: more than :data:`MAX_CLAUSES` clauses, or a count no step may have."""


def check_limits(sources: list[str]) -> None:
    """:class:`ProseLimitError` for a text of more clauses than :data:`MAX_CLAUSES` or a clause longer than
    :data:`MAX_CLAUSE_CHARS` (no step is written that long, and matching names in it would take minutes): the
    parse is refused, never cut short."""
    if len(sources) > MAX_CLAUSES:
        raise ProseLimitError(
            f"the text has {len(sources)} clauses and barsym parse reads at most {MAX_CLAUSES} (one step each); "
            f"split it into parts of at most {MAX_CLAUSES}"
        )
    for number, source in enumerate(sources, 1):
        if len(source) > MAX_CLAUSE_CHARS:
            raise ProseLimitError(
                f"clause {number} ({_shown(source)}) has {len(source)} characters and barsym parse reads clauses "
                f"of at most {MAX_CLAUSE_CHARS}; end each step with a comma, 'then' or a new line"
            )


def check_counts(clauses: list[Clause]) -> None:
    """:class:`ProseLimitError` for a clause whose count is more than one step may hold (``notation.MAX_COUNT``):
    refused, never capped."""
    for number, clause in enumerate(clauses, 1):
        if clause.count is not None and clause.count > notation.MAX_COUNT:
            raise ProseLimitError(
                f"clause {number} ({_shown(clause.source)}) asks for more than {notation.MAX_COUNT}, the most one "
                "step may hold; give the count in steps of at most that"
            )


def _shown(source: str) -> str:
    return repr(source if len(source) <= 80 else source[:60] + f"... ({len(source)} characters)")


@dataclass(frozen=True)
class Clause:
    """One clause as the model is asked about it."""

    source: str  # as written (lower-cased, punctuation dropped)
    shown: str  # what the prompt says: counts as digits
    count: int | None
    candidates: tuple[str, ...]  # names the grammar offers ("" = every name)
    dig: bool
    tools: tuple[str, ...] = ()  # tools named after "with"/"using" (none: the grammar offers no tool)
    names_anything: bool = True  # a word outside STOP_WORDS (no candidates then: every name is offered)
    verb: str | None = None  # the step kind the sentence's verb says (verb_of), e.g. "smelt" for "cook"


@dataclass
class ParsedPlan:
    """What :meth:`ProseParser.parse` found: a step per clause it could read, the clauses it could not."""

    steps: list[Step] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the clause each step came from
    replies: list[str] = field(default_factory=list)  # the model's line for each step (before counts/tools)
    skipped: list[str] = field(default_factory=list)  # clauses that name nothing
    unread: list[str] = field(default_factory=list)  # clauses that name something no item is near: not read
    gaps: list[int] = field(default_factory=list)  # for each unread clause, how many steps came before it
    stats: LLMStats = field(default_factory=LLMStats)  # the model's calls, tokens and time (as the planners')

    @property
    def calls(self) -> int:
        return self.stats.llm_calls

    @property
    def complete(self) -> bool:
        """Whether every clause that names something became a step (else the plan has gaps where it could not)."""
        return not self.unread

    def plan(self, source: str = "<prose>") -> Plan:
        return Plan(steps=tuple(self.steps), source=source)
