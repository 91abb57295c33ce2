"""Parse examples: one sentence of a prose plan and the step it means, in ``barsym parse``'s own prompt.

``barsym parse`` asks the model one clause at a time (:class:`~barsym.reasoning.prose.parser.ProseParser`):
the few-shot prefix, ``Sentence: ...`` with the facts line of the closest names, under a grammar
that fixes the count and offers those names. The examples here are built the same way: a step of
a training goal's symbolic plan is told in words, the parser reads the clause exactly as it would
(:meth:`~barsym.reasoning.prose.parser.ProseParser.clause`), and the reply is the step the words came
from, kept only when the parser's grammar admits it.

**Held out.** The parse table is measured on ``tests/data/paraphrases.json``, made by
``bench/make_paraphrases.py`` from its own verb, synonym, typo and join lists over BAR's expert
plans. None of those lists is used here: every word list below is written for training, and no
verb, synonym or typo rule is shared, so the table measures whether the model learned to read a
clause, not the test set's phrasing. (Verbs the grammar itself names -- "mine", "craft", "smelt",
"kill", "dig down" -- are the step notation's words and occur in both.)
"""

from __future__ import annotations

import random

from ..model import Goal, Plan, Step, StepType

#: verbs by what the step does (none is in bench/make_paraphrases.py's lists)
VERBS = {
    "mine": ["obtain", "acquire", "grab", "fetch", "quarry", "extract", "pick up", "mine"],
    "wood": ["fell", "saw", "knock down", "obtain", "take", "grab"],
    "craft": ["fashion", "produce", "construct", "form", "prepare", "whip up", "craft", "put in order"],
    "smelt": ["roast", "bake", "heat", "refine", "smelt", "burn"],
    "kill": ["defeat", "take out", "fight", "attack"],
    # the parser knows a dig by these words only (prose._DIG); no other is a dig down
    "dig": ["dig down", "descend", "go down", "dig down further"],
}
#: other names for some items (none of the test set's)
SYNONYMS = {
    "logs": ["timber", "tree logs", "lumber logs"],
    "planks": ["plank boards", "timber planks"],
    "stick": ["staffs", "sticks of wood"],
    "crafting_table": ["crafting station", "work table"],
    "cobblestone": ["cobblestones", "cobbled stone"],
    "furnace": ["smelter"],
    "coal": ["black coal", "coal chunks"],
    "iron_ingot": ["iron ingots", "ingots of iron"],
    "gold_ingot": ["gold ingots", "golden ingots"],
    "string": ["thread"],
    "wool": ["fleece"],
}
#: how a step's tool is said (none of bench/make_paraphrases.py's "with the", "using the", "with my", "using a",
#: "with a": with a dig verb, the step notation's own words, those would make a clause of the test set)
TOOL_WORDS = ["holding the", "wielding my", "equipped with the", "by means of one", "swinging the"]


def misspelt(word: str, rng: random.Random) -> str:
    """A doubled letter or a vowel changed (the test set swaps or drops letters instead)."""
    if len(word) < 5:
        return word
    i = rng.randrange(1, len(word) - 1)
    if rng.random() < 0.5:
        return word[:i] + word[i] + word[i:]
    vowels = [j for j, c in enumerate(word) if c in "aeiou" and 0 < j < len(word) - 1]
    if not vowels:
        return word
    j = rng.choice(vowels)
    return word[:j] + rng.choice([v for v in "aeiou" if v != word[j]]) + word[j + 1 :]


def spoken_name(item: str, count: int, rng: random.Random, players: dict[str, list[str]] | None = None) -> str:
    """The item in words: a name players use (the alias table's) one time in four where it has one, another name
    of this module's one time in five, else its words, maybe plural, maybe misspelt."""
    if players and item in players and rng.random() < 0.25:
        return rng.choice(players[item])
    if item in SYNONYMS and rng.random() < 0.2:
        return rng.choice(SYNONYMS[item])
    words = item.split("_")
    if count > 1 and not words[-1].endswith("s") and rng.random() < 0.5:
        words[-1] += "s"
    if rng.random() < 0.1:
        j = max(range(len(words)), key=lambda k: len(words[k]))
        words[j] = misspelt(words[j], rng)
    return " ".join(words)


def spoken_count(count: int, rng: random.Random) -> str | None:
    """The count in words or digits; None (about one in eight): left out, as people do."""
    from ..reasoning.prose.clauses import UNITS

    if rng.random() < 0.12:
        return None
    if count == 1:
        return rng.choice(["1", "one", "a single", "an", "a"])
    words = {v: k for k, v in UNITS.items() if k not in ("a", "an", "both", "pair", "couple", "dozen")}
    if count in words and rng.random() < 0.5:
        return words[count]
    return str(count)


def tell(step: Step, rng: random.Random, players: dict[str, list[str]] | None = None) -> str | None:
    """One step in words, as one clause (None: a kind of step ``barsym parse`` does not read)."""
    tool = ""
    if step.tool and rng.random() < 0.5:
        tool = f" {rng.choice(TOOL_WORDS)} {step.tool.replace('_', ' ')}"
    if step.type is StepType.DIG_DOWN:
        return rng.choice(VERBS["dig"]) + tool
    kind = "wood" if step.type is StepType.MINE and step.item == "logs" else step.type.value
    if kind not in VERBS:
        return None
    said = spoken_count(step.count or 1, rng)
    name = spoken_name(step.item or "", step.count or 1, rng, players)
    return f"{rng.choice(VERBS[kind])} {said + ' ' if said else ''}{name}{tool}"


def reply_for(step: Step, clause) -> str | None:
    """The line the model should write for ``clause`` (None: the parser offers no way to say ``step``)."""
    tool = f" with {step.tool}" if step.tool and step.tool in clause.tools else ""
    if step.type is StepType.DIG_DOWN:
        return f"dig down{tool}" if clause.dig else None
    if clause.candidates and step.item not in clause.candidates:
        return None
    count = clause.count if clause.count is not None else 1
    return f"{step.type.value} {count} {step.item}{tool}"


def parse_examples(parser, goal: Goal, plan: Plan, rng: random.Random) -> list[dict]:
    """Every step of ``plan`` told in words and answered with itself, in the parser's prompt and grammar."""
    from ..reasoning.prose.clauses import split_clauses
    from .oracle import admitted

    players: dict[str, list[str]] = {}
    for phrase, item in sorted(parser.kb.player_names.items()):
        players.setdefault(item, []).append(phrase)
    out = []
    for step in plan.steps:
        told = tell(step, rng, players)
        clauses = split_clauses(rng.choice(["", "", "then "]) + told) if told else []
        if len(clauses) != 1:
            continue
        clause = parser.clause(clauses[0])
        if not clause.candidates and not clause.dig:
            continue  # the parser skips it without asking
        reply = reply_for(step, clause)
        grammar = parser.grammar(clause)
        if reply is None or not admitted(reply, grammar):
            continue
        messages = parser.prefix + [{"role": "user", "content": parser.question(clause)}]
        out.append({"kind": "parse", "goal": goal.item, "count": goal.count, "messages": messages, "reply": reply})
    return out
