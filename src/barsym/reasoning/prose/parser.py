"""DEPS' goal parser: a plan written in prose, turned into BAR steps by the model under the step grammar.

People annotate plans in words -- "chop four logs, make planks, then a crafting
table" -- and a 135M model cannot be asked to turn a paragraph into a plan.
So the work is split where a small model has a chance:

1. **One sentence at a time.** The text is cut into clauses (at ``.``, ``;``,
   ``,``, new lines, "then", "and", "after that", "next", "finally"); each
   clause is one step, and the model sees one clause per call, after a few
   fixed examples of how a sentence becomes a step.
2. **Counts in words are mapped** before the model sees the clause ("four" ->
   4, "a" -> 1, "a dozen" -> 12), and the count is then fixed text of that
   clause's grammar: a count is read, not guessed. A clause without one ("make
   planks") gets the amount the rest of the plan needs (:func:`fill_counts`:
   what the later crafts and smelts consume), at least 1.
3. **The grammar offers the knowledge base's names.** Each clause's grammar is
   barsym's step fragment (:func:`barsym.steps.step_rules`) over the names of
   :class:`~.reply_grammar.GrammarBuilder` (every reachable item and tool).
   A name players use ("workbench", "cobble", "wood pick": the knowledge
   base's ``player_names``, from ``aliases.json`` with the source of each) is
   read as its item first. Where the clause's words are close to some names
   (plural, typos: "cobbelstone", "crafting table"), only the
   :data:`MAX_CANDIDATES` closest are offered, so the model chooses the verb and
   one of a few names; a name the clause spells out, every part a word of it
   and the verb agreeing ("craft 1 iron pickaxe"), is offered alone (what the
   text says is not a choice). Where nothing is close ("a smeltery", "place a gizmo"),
   the clause is **not read**: ``barsym parse`` names it ("could not read:
   'place a gizmo'") and marks the plan incomplete, rather than let the model
   turn it into an unrelated item. A clause with no word that could name
   anything ("hello there": :data:`STOP_WORDS` only) is no step.
4. **A tool the prose leaves out** of a mine or dig down that needs one is the
   latest tool of the right kind made earlier in the plan (what a human means by
   "then mine the iron ore"), else the lowest tier that can.

The model (or a stand-in, :mod:`barsym.llm.stand_in`, as a baseline) writes
one step line per clause; the plan is then checked by barsym's validator.
"""

from __future__ import annotations

import difflib
import re

from ... import steps as notation
from ...graph import CraftGraph, item_node
from ...kb import KnowledgeBase, UnknownItemError
from ...llm import LLMBackend, LLMError
from ...llm.grammar import gbnf_literal, gbnf_word_choice
from ...model import Step, StepType
from ..calls.call_log import CallLog
from ..calls.model_calls import ModelGateway
from ..grammars.reply_grammar import GrammarBuilder
from .clauses import (
    STOP_WORDS,
    Clause,
    ParsedPlan,
    ProseLimitError,
    check_counts,
    check_limits,
    count_of,
    split_clauses,
    verb_of,
)
from .gaps import fill_counts, fill_tools

__all__ = ["Clause", "ParsedPlan", "ProseLimitError", "ProseParser", "count_of", "split_clauses"]

MAX_CANDIDATES = 6
#: how close a word must be to a name's part to count (difflib's ratio; plurals and one typo pass)
CLOSE = 0.78
#: as close, for a name only some of whose parts are in the clause ("the iron": iron_ingot)
CLOSE_PART = 0.9
#: the shortest clipped word read as the start of a name's part, if it is at least half of it
MIN_CLIPPED = 4
_DIG = re.compile(r"\bdig(?:s|ging)?\s+down\b|\bdescend\b|\bgo\s+down\b|^down\b")

SYSTEM = (
    "You turn one sentence of a Minecraft plan into one step: mine, craft, smelt or kill, the count and "
    "the item, and 'with' the tool if one is named; or 'dig down with' a pickaxe. Reply with the step only."
)
#: (sentence as the model sees it, the step) -- written for this prompt; no BAR task's plan
EXAMPLES = (
    ("gather 2 logs", "mine 2 logs"),
    ("build 1 furnace", "craft 1 furnace"),
    ("cook 2 iron ore into iron ingots", "smelt 2 iron_ingot"),
    ("dig down using the wooden pickaxe", "dig down with wooden_pickaxe"),
    ("slay 1 chicken", "kill 1 chicken"),
    ("break 5 coal ore with the stone pickaxe", "mine 5 coal with stone_pickaxe"),
    ("put together 8 sticks", "craft 8 stick"),
)


class ProseParser:
    """Prose -> steps with one backend (a model or a stand-in)."""

    def __init__(
        self,
        kb: KnowledgeBase,
        graph: CraftGraph,
        backend: LLMBackend,
        *,
        seed: int = 0,
        log: CallLog | bool | None = None,
    ):
        """``log``: True for the default call log (``barsym logs``), as the planners' calls; None for none."""
        self.kb, self.backend, self.seed, self.graph, self.log = kb, backend, seed, graph, log
        builder = GrammarBuilder(kb, graph)
        self.rules = builder.rules
        self.items, self.tools, self.verbs = builder.items, builder.tools, builder.verbs
        self._parts = {name: name.split("_") for name in self.items}
        self._tool_parts = {name: name.split("_") for name in self.tools}
        self._ratios: dict[tuple[str, str], float] = {}
        names = getattr(kb, "player_names", {})
        self._player_phrases = sorted(
            (
                (tuple(phrase.split()), item)
                for phrase, item in names.items()
                if kb.is_known(item) and "_".join(phrase.split()) not in kb.items  # a release's own name wins
            ),
            key=lambda entry: -len(entry[0]),
        )
        self._drops = kb.block_drops
        self.prefix = [{"role": "system", "content": SYSTEM}]
        for sentence, step in EXAMPLES:  # with the facts line the parser gives them, as every question has
            self.prefix += [
                {"role": "user", "content": self.question(self.clause(sentence))},
                {"role": "assistant", "content": step},
            ]

    def question(self, clause: Clause) -> str:
        facts = self.facts(clause)
        return f"Sentence: {clause.shown}" + (f"\n{facts}" if facts else "")

    # ---- reading a clause --------------------------------------------------------------
    def clause(self, source: str) -> Clause:
        words = source.replace("-", " ").split()
        count, rest = count_of(words)
        dig = bool(_DIG.search(source))
        shown = " ".join(words if count is None else self._with_digits(words, count, rest))
        cut = next((i for i, w in enumerate(rest) if w in ("with", "using", "by")), len(rest))
        tools = tuple(t for t in self.candidates(rest[cut + 1 :], self._tool_parts)) if cut < len(rest) else ()
        if cut < len(rest):
            tools = tuple(dict.fromkeys(self.players(rest[cut + 1 :])[0] + list(tools)))
        named = any(w not in STOP_WORDS and not w.isdigit() for w in rest[:cut])
        said, others = self.players(rest[:cut])
        scored = [] if said else self._scored(others, None)
        candidates = tuple(said) if said else tuple(entry[-1] for entry in scored[:MAX_CANDIDATES])
        verb = verb_of(words)
        ordered = self.by_verb(candidates, verb)
        one = self.spelled(scored)
        if one is not None and ordered[:1] == self.by_verb((one,), verb):
            # the text spells the item out and the verb agrees ("craft 1 iron pickaxe"): only it is offered, so
            # neither the model nor a stand-in chooses what the words say (a taught model once read that clause
            # as `mine 1 iron_ore`, the second name offered); "fire three iron bars" still offers iron_ingot
            ordered = ordered[:1]
        return Clause(source, shown, count, ordered, dig, tools, named, verb)

    def by_verb(self, candidates: tuple[str, ...], verb: str | None) -> tuple[str, ...]:
        """The candidates as the sentence's verb reads them.

        A mined block gives what breaking it drops (the knowledge base's ``block_drops``: "mine 2 stone blocks"
        is cobblestone, "break the diamond ore" diamond), where the block is not itself mined. And when the
        closest name is not usually made the way the verb says ("smelt three iron": iron_nugget is usually
        crafted), the closest name usually made that way ("iron_ingot"), else the closest that can be made
        that way at all, comes first; the others keep their order.
        """
        if verb == "mine":
            candidates = tuple(
                dict.fromkeys(
                    self._drops.get(name, name) if "mine" not in self.verbs_for(name) else name for name in candidates
                )
            )
        if verb is None or not candidates or self.verbs_for(candidates[0])[:1] == [verb]:
            return candidates
        fitting = next((name for name in candidates if self.verbs_for(name)[:1] == [verb]), None)  # its usual way
        if fitting is None:
            fitting = next((name for name in candidates if verb in self.verbs_for(name)), candidates[0])
        return (fitting, *(name for name in candidates if name != fitting))

    def players(self, words: list[str]) -> tuple[list[str], list[str]]:
        """The items named in ``words`` by a name players use ("workbench", "wood pick"; a plural too), longest
        phrase first, and the words left."""
        found: list[str] = []
        left = list(words)
        for phrase, item in self._player_phrases:
            n = len(phrase)
            i = 0
            while i + n <= len(left):
                window = left[i : i + n]
                if (
                    tuple(window[:-1]) == phrase[:-1]
                    and window[-1] in (phrase[-1], phrase[-1] + "s", phrase[-1] + "es")
                    and not (i and "_".join([left[i - 1], *phrase]) in self.kb.items)  # "oak wood" is oak_wood
                    and not (n == 1 and any(w not in STOP_WORDS for w in left[i + 1 :]))  # "wood shovel": a material
                ):
                    found.append(item)
                    del left[i : i + n]
                else:
                    i += 1
        return list(dict.fromkeys(found)), left

    @staticmethod
    def _with_digits(words: list[str], count: int, rest: list[str]) -> list[str]:
        """The clause with its count in digits where the count was (the verb stays first)."""
        removed = len(words) - len(rest)
        for i in range(len(words) + 1):
            if words[:i] == rest[:i] and words[i + removed :] == rest[i:]:
                return rest[:i] + [str(count)] + rest[i:]
        return [str(count), *rest]

    def candidates(self, words: list[str], names: dict[str, list[str]] | None = None) -> tuple[str, ...]:
        """The names closest to the clause's words, best first: names with every part near some word
        ("crafting table", "cobbelstone") before names with only some ("the iron": iron_ingot, iron_ore)."""
        return tuple(entry[-1] for entry in self._scored(words, names)[:MAX_CANDIDATES])

    @staticmethod
    def spelled(scored: list[tuple]) -> str | None:
        """The name the words spell out, every part of it a word there ("iron pickaxe", "stone blocks": stone),
        when no other name spelled out has as many parts and it is the closest name; else None. ``scored``:
        :meth:`_scored`'s list."""
        spelled = [entry for entry in scored if not entry[0] and -entry[1] == entry[2]]  # every part exact
        if spelled and scored[0] is spelled[0] and (len(spelled) == 1 or spelled[0][2] > spelled[1][2]):
            return spelled[0][-1]
        return None

    def _scored(self, words: list[str], names: dict[str, list[str]] | None) -> list[tuple]:
        """Every name near the words, as (some parts only, -closeness, parts, cost, name), best first."""
        words = [w for w in words if w not in STOP_WORDS]
        if not words:
            return []
        stems = list(
            dict.fromkeys(
                words
                + [w.rstrip("'s") for w in words if len(w) > 3]
                + [w[:-2] for w in words if w.endswith("es") and len(w) > 4]
            )
        )
        scored = []
        for name, parts in (names or self._parts).items():
            ratios = [max(self._ratio(part, w) for w in stems) for part in parts]
            matched = [r for r in ratios if r >= CLOSE]
            if len(matched) < len(parts):  # only some parts: those must be nearly exact ("world" is not "sword")
                matched = [r for r in ratios if r >= CLOSE_PART]
            if matched:  # equally close: the cheaper to obtain first ("iron": iron_ingot before iron_chestplate)
                cost = self.graph.costs.get(item_node(name), float("inf"))
                scored.append((len(matched) < len(parts), -round(sum(matched), 6), len(parts), cost, name))
        scored.sort()
        return scored

    def _ratio(self, part: str, word: str) -> float:
        key = (part, word)
        found = self._ratios.get(key)
        if found is None:
            found = difflib.SequenceMatcher(None, part, word).ratio()
            if len(part) == len(word) > 3 and sorted(part) == sorted(word):
                found = max(found, 0.9)  # letters swapped: "pikcaxe"
            elif len(word) >= MIN_CLIPPED and part.startswith(word) and 2 * len(word) >= len(part):
                found = max(found, CLOSE)  # a clipped word ("shov" for shovel): as close as one typo, no closer
            self._ratios[key] = found
        return found

    def verbs_for(self, name: str) -> list[str]:
        """The verbs the knowledge base makes ``name`` with (a "mine logs" is never offered as "craft logs")."""
        try:
            kinds = set(self.rules.producers(self.kb.resolve(name)))
        except UnknownItemError:
            return []
        best = (self.graph.best_producer(self.kb.resolve(name)) or "").split(":")[0]
        return sorted((verb for verb in self.verbs if verb in kinds), key=lambda verb: verb != best)

    def options(self, clause: Clause) -> list[tuple[str, str]]:
        """(verb, name) pairs the clause's grammar offers, the closest name first, each name's ways in the order
        the sentence's verb gives (the way it says first), else its usual way first."""
        return [
            (verb, name)
            for name in (clause.candidates or self.items)
            for verb in sorted(self.verbs_for(name), key=lambda verb: verb != clause.verb)
        ]

    def grammar(self, clause: Clause) -> str:
        """The clause's step grammar: the notation's tool and count rules, its count fixed, the candidates'
        names each under the verbs that make it; a clause that says "dig down" is a dig down."""
        _, _, tool, _ = notation.step_rules("root", self.verbs)
        count = clause.count if clause.count is not None else 1  # an open count is filled in afterwards
        count_rule = f"count ::= {gbnf_literal(str(count))}"  # the clause's count as written (check_limits: <= MAX)
        with_tool = " tool?" if clause.tools else ""  # no tool named: none offered (filled in from the plan)
        if clause.dig and not clause.candidates:
            alternatives = [f"{gbnf_literal(notation.DIG)}{with_tool}"]
        else:
            by_verb: dict[str, list[str]] = {}
            for verb, name in self.options(clause):
                by_verb.setdefault(verb, []).append(name)
            alternatives = [
                f'{gbnf_literal(verb + " ")} count " " {gbnf_word_choice(names)}{with_tool}'
                for verb, names in by_verb.items()
            ]
        rules = [f"root ::= {' | '.join(alternatives)}", count_rule]
        if clause.tools:
            rules += [tool, f"toolname ::= {gbnf_word_choice(clause.tools)}"]
        return "\n".join(rules)

    def facts(self, clause: Clause) -> str:
        """The prompt's facts line: the steps the clause may mean, the closest first (what copy-facts copies)."""
        tool = f" with {clause.tools[0]}" if clause.tools else ""
        if clause.dig and not clause.candidates:
            return f"Known: {notation.DIG}{tool}." if tool else ""
        count = clause.count if clause.count is not None else 1
        shown = [f"{verb} {count} {name}{tool}" for verb, name in self.options(clause)[:MAX_CANDIDATES]]
        return "Known: " + "; or ".join(shown) + "." if clause.candidates and shown else ""

    # ---- the whole text ----------------------------------------------------------------
    def parse(self, text: str) -> ParsedPlan:
        out = ParsedPlan()
        gateway = ModelGateway(self.backend, seed=self.seed, max_failures=1, log=self.log or None, stats=out.stats)
        open_counts: list[int] = []
        sources = split_clauses(text)
        check_limits(sources)  # all clauses, or a refusal naming the limit (before any name is matched)
        clauses = [self.clause(source) for source in sources]
        check_counts(clauses)  # a count is the text's, or a refusal naming the most a step holds
        for clause in clauses:
            source = clause.source
            if not clause.candidates and not clause.dig:  # no item near its words: named, never guessed
                if clause.names_anything:
                    out.unread.append(source)
                    out.gaps.append(len(out.steps))
                else:
                    out.skipped.append(source)
                continue
            messages = self.prefix + [{"role": "user", "content": self.question(clause)}]
            reply = gateway.ask(messages, self.grammar(clause), 32, f"parse: {clause.shown}", lambda text: True)
            if reply is None:  # the model failed: the command says so in one line, no half-parsed plan
                raise gateway.last_error or LLMError(gateway.down or "the model gave no reply")
            step = self._step(reply.splitlines()[0] if reply else "")
            if step is None:
                out.skipped.append(source)
                continue
            if clause.count is None and step.type is not StepType.DIG_DOWN:
                open_counts.append(len(out.steps))
            out.steps.append(step)
            out.sources.append(source)
            out.replies.append(reply)
        out.steps = fill_tools(self.rules, fill_counts(self.rules, out.steps, open_counts))
        return out

    def _step(self, line: str) -> Step | None:
        read = notation.read_step(line)
        if read is None:
            return None
        try:
            if read.verb is None:
                return Step(type=StepType.DIG_DOWN, tool=read.tool)
            return Step(
                type=StepType(read.verb),
                item=self.kb.resolve(read.item or "") and read.item,
                count=read.count,
                tool=read.tool,
            )
        except (UnknownItemError, ValueError):
            return None
