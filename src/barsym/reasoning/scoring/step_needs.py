"""What a plan's step needs, in words, for the step scorer's questions: the tools, stations, fuel and inputs
the rule book asks of it, beside what the player has before it (``needs_beside_have``).

Split from :mod:`.step_scorer` (the scorer: its prompts, methods and calls) along that seam: this reads the
rule book only, and asks no model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from ...kb import Rules
from ...kb.actions import Slot
from ...model import Step, StepType
from ...sim import State


def needs_text(rules: Rules, step: Step, *, every_lowest_tool: bool = False) -> str:
    """What ``step`` needs, in words, from the rule book's action schema ("" when the rules do not know it).

    A tool is named by the first that serves ("a golden_pickaxe or better": golden is wooden's tier), or,
    with ``every_lowest_tool``, by every tool of the lowest serving tier ("a golden_pickaxe or wooden_pickaxe
    or better"), so a plan's own tool is among the names."""
    if step.type is StepType.CLIMB_UP:
        return "nothing (it climbs one layer up)"
    needs = _needs(rules, step, every_lowest_tool)
    return "" if needs is None else ", ".join(need for need, _ in needs) or "nothing"


def needs_beside_have(rules: Rules, step: Step, have: State) -> str:
    """What ``step`` needs (:func:`needs_text`, every lowest tool named), each need followed by what
    ``have`` holds of it ("4 logs (have 2)"; "" when the rules do not know the step).

    Counts are summed over everything a slot accepts (all logs for "logs"); a tool need names the
    highest-tier tool of its kind held ("none"); fuel is what the inventory would burn once the
    step's ingredients are taken out."""
    if step.type is StepType.CLIMB_UP:
        return "nothing (it climbs one layer up)"
    needs = _needs(rules, step, True)
    return "" if needs is None else ", ".join(f"{need} ({held(have)})" for need, held in needs) or "nothing"


def _needs(rules: Rules, step: Step, every_lowest_tool: bool) -> list[tuple[str, Callable[[State], str]]] | None:
    """Each need of ``step`` in words, with what a state holds of it in words; None when the rules do not know
    the step. One list for :func:`needs_text` and :func:`needs_beside_have`, so both name the same needs."""
    if step.type is StepType.DIG_DOWN:
        kind = rules.kb.dig_down_kind
        return [("a pickaxe (any tier)", lambda have: f"have {_held_tool(rules, kind, have)}")]
    action = rules.step_action(step)
    if action is None:
        return None
    needs: list[tuple[str, Callable[[State], str]]] = [
        (f"{slot.count} {_slot_name(rules, slot.accepts)}", lambda have, a=slot.accepts: f"have {have.count_any(a)}")
        for slot in action.needs
    ]
    if action.station:
        station = action.station
        needs.append((f"a {station} nearby", lambda have: f"have {have.count(station)}"))
    if action.fuel:
        needs.append(
            (f"fuel for {action.fuel:g} items", lambda have: f"have fuel for {_spare_burn(rules, action, have):g}")
        )
    if action.tool is not None:
        kind = action.tool.kind
        name = _tool_name(rules, action.tool, every_lowest_tool)
        needs.append((f"a {name} or better", lambda have: f"have {_held_tool(rules, kind, have)}"))
    if action.layer:
        needs.append((f"being on layer {action.layer} or deeper", lambda have: f"on layer {have.layer}"))
    return needs


def _held_tool(rules: Rules, kind: str, have: State) -> str:
    """The highest-tier tool of ``kind`` held (the rule book's choice with ``best``), or "none"."""
    if rules.best_held_tool(kind, 0, have.count) is None:
        return "none"
    return rules.choose_tool(kind, 0, have.count, best=True)


def _spare_burn(rules: Rules, action, have: State) -> float:
    """The whole items the inventory would smelt by burning, once ``action``'s ingredients are taken out."""
    return math.floor(spare_burn(rules, action.needs, have))


def spare_burn(rules: Rules, slots: Iterable[Slot], have: State) -> float:
    """The items the inventory would smelt by burning, once ``slots`` (a step's ingredients) are taken out
    the way the game takes them (:meth:`~barsym.kb.Rules.take`: any member of a slot, in its order)."""
    taken: dict[str, int] = {}
    for slot in slots:
        rules.take(slot, slot.count, have.counts, taken)
    return sum(rules.fuel_value(name) * (n - taken.get(name, 0)) for name, n in have.counts.items())


def _tool_name(rules: Rules, tool, every_lowest: bool) -> str:
    if not tool.options:
        return tool.kind
    if not every_lowest:
        return tool.options[0]
    lowest = tool.options[0]  # the options come lowest tier first
    return " or ".join(sorted(name for name in tool.options if rules.compare_tools(name, lowest) == 0))


def _slot_name(rules: Rules, accepts: tuple[str, ...]) -> str:
    """A slot as BAR writes it: the family name (logs, planks), else the preferred member, else the members."""
    kb = rules.kb
    generic = [name for name in accepts if name in kb.generic] if rules.generic_names else []
    preferred = [name for name in kb.prefer if name in accepts]
    return (generic or preferred or [" or ".join(accepts[:3])])[0]
