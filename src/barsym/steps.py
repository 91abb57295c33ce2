"""BAR's step notation, in one place: how a step is written, read, and constrained in a grammar.

Plans, prompts, the model's replies and the forward planners' lines all speak
one notation::

    mine 4 logs
    craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table
    mine 3 iron_ore with stone_pickaxe: 1 stone_pickaxe, layer 2
    dig down with wooden_pickaxe: 1 wooden_pickaxe
    climb up

A step is ``VERB COUNT ITEM [with TOOL]`` (``dig down [with TOOL]`` and
``climb up`` name no item); a reply adds ``: SUBGOAL, ...``, each ``COUNT
ITEM`` or ``layer N``. Item names have no spaces, so a line reads without
ambiguity. :func:`render` writes a step (``Step.__str__`` calls it),
:func:`read_step` / :func:`read_subgoal` read one back (the reply parser and
the forward planners' parser use them), and :func:`step_rules` is the GBNF
fragment both model grammars are built from.

Counts: a step's count is at most :data:`MAX_COUNT` (a full inventory of 36
slots x 64, ten times over: anything larger is a typo). A model writes at most
three digits, :data:`GRAMMAR_MAX_COUNT` (999), which :data:`COUNT_GBNF`
admits; the grammars offer nothing larger, and the parsers still accept up to
:data:`MAX_COUNT` from a server that ignores the grammar.

This module imports nothing from barsym (it is the bottom layer), so the plan
model and the grammar helpers can both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Upper bound for a step's (and a goal's) count.
MAX_COUNT = 23040
#: Counts 1-999 in GBNF: what the model grammars let a model write.
COUNT_GBNF = "[1-9] [0-9]? [0-9]?"
GRAMMAR_MAX_COUNT = 999
ITEM_VERBS = ("craft", "smelt", "mine", "kill")
DIG, CLIMB = "dig down", "climb up"
#: the step types' values (barsym.model.StepType) that name no item
MOVES = {"dig_down": DIG, "climb_up": CLIMB}

_STEP = re.compile(
    r"^(?:(?P<verb>[a-z_]+) (?P<count>\d+) (?P<item>\S+)|(?P<move>dig down|climb up))"
    r"(?: with (?P<tool>\S+))?$"
)
_SUBGOAL = re.compile(r"^(?:(?P<count>\d+) (?P<item>\S+)|layer (?P<layer>\d+))$")
_NUMBERING = re.compile(r"^\d+[.)]\s*")  # "1. " or "2) " before a step, as models number lines


@dataclass(frozen=True, slots=True)
class StepText:
    """A step as read: ``verb`` None for a dig down, ``climb_up`` for a climb; names as written (not yet checked against a knowledge base)."""

    verb: str | None
    count: int | None
    item: str | None
    tool: str | None


@dataclass(frozen=True, slots=True)
class SubgoalText:
    count: int | None
    item: str | None
    layer: int | None  # ``layer N``: count and item are None


#: the most of one piece of the user's text (a name, a clause, a message) barsym echoes (docs/reliability.md)
MOST_ECHO = 2000


def clip(text: str, most: int = MOST_ECHO) -> str:
    """``text`` cut to about ``most`` characters for showing, its start and end kept and its length said:
    an item name of 20 MB in a plan file is one readable line of the output, not 20 MB of it."""
    if len(text) <= most:
        return text
    return f"{text[: most - 400]} ...({len(text)} characters in all)... {text[-300:]}"


def render(kind: str, item: str | None, count: int | None, tool: str | None = None) -> str:
    """``craft 4 stick``, ``mine 3 iron_ore with stone_pickaxe``, ``dig down with wooden_pickaxe``, ``climb up``
    (a name longer than :data:`MOST_ECHO` shown :func:`clip`-ped: no real item comes near it)."""
    if kind == "climb_up":
        return CLIMB
    head = DIG if kind == "dig_down" else f"{kind} {count} {clip(item or '')}"
    return head + (f" with {clip(tool)}" if tool else "")


def render_subgoal(item: str | None, count: int | None, layer: int | None = None) -> str:
    """``3 planks`` or ``layer 2``."""
    return f"layer {layer}" if layer is not None else f"{count} {item}"


def render_line(step: str, subgoals: list[str]) -> str:
    """A step with its subgoals, the reply format: ``craft 1 stick: 2 planks``."""
    return step + (": " + ", ".join(subgoals) if subgoals else "")


def read_step(text: str, numbered: bool = False) -> StepText | None:
    """One step, or None when ``text`` is not in the notation (``numbered``: a leading ``1.`` is allowed)."""
    if numbered:
        text = _NUMBERING.sub("", text, count=1)
    match = _STEP.match(text)
    if match is None:
        return None
    count = int(match["count"]) if match["count"] is not None else None
    verb = "climb_up" if match["move"] == CLIMB else match["verb"]
    return StepText(verb, count, match["item"], match["tool"])


def read_subgoal(text: str) -> SubgoalText | None:
    match = _SUBGOAL.match(text)
    if match is None:
        return None
    if match["layer"] is not None:
        return SubgoalText(None, None, int(match["layer"]))
    return SubgoalText(int(match["count"]), match["item"], None)


def counts_ok(count: int) -> bool:
    return 1 <= count <= MAX_COUNT


def _literal(word: str) -> str:
    assert re.fullmatch(r"[a-z_ ]+", word), word  # no escaping needed for the notation's own words
    return f'"{word}"'


def step_rules(rule: str, verbs: tuple[str, ...] | list[str], dig: bool = True) -> list[str]:
    """GBNF rules ``RULE``, ``verb``, ``tool`` and ``count`` for one step line (the caller defines ``item`` and
    ``toolname``; rule names use ``-``, never ``_``, as llama.cpp wants)."""
    return [
        f'{rule} ::= verb " " count " " item tool?' + (f" | {_literal(DIG)} tool?" if dig else ""),
        f"verb ::= {' | '.join(_literal(v) for v in verbs)}",
        'tool ::= " with " toolname',
        f"count ::= {COUNT_GBNF}",
    ]
