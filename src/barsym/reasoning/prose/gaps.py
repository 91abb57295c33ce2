"""What a plan written in prose leaves out, filled in from the rule book: counts and tools.

People write "make planks, then a crafting table" and "then mine the iron ore":
no count, no pickaxe. The model is not asked for them (a count it cannot read
it would guess); :class:`~.prose.ProseParser` fills them here, after every
clause is a step, because both depend on the steps around it:

- a missing count is what the later crafts and smelts consume of the item, at least 1;
- a missing tool of a mine or dig down that needs one is the latest tool of the
  right kind made earlier in the plan (what a human means), else the lowest tier that can.
"""

from __future__ import annotations

from ...kb import KnowledgeBase, UnknownItemError
from ...model import Step, StepType

__all__ = ["fill_counts", "fill_tools"]


def fill_counts(rules, steps: list[Step], open_at: list[int]) -> list[Step]:
    """Counts the prose left out: what the later crafts and smelts consume of the item, at least 1 (last first)."""
    steps = list(steps)
    kb = rules.kb
    for i in reversed(open_at):
        item = steps[i].item
        wanted = 0
        for later in steps[i + 1 :]:
            if later.type not in (StepType.CRAFT, StepType.SMELT) or later.item is None:
                continue
            try:
                made = kb.resolve(later.item)
            except UnknownItemError:
                continue
            if later.type is StepType.CRAFT:
                action = rules.fitting_action(made, later.count or 1, {})
                needs = [(slot.accepts, slot.count) for slot in action.needs] if action is not None else []
            else:
                chosen = rules.smelt_recipe(made, later.count or 1, {})
                needs = [(chosen[0].input.accepts, later.count or 1)] if chosen is not None else []
            wanted += sum(n for accepts, n in needs if _covers(kb, item, accepts))
        steps[i] = Step(type=steps[i].type, item=item, count=max(1, wanted), tool=steps[i].tool)
    return steps


def _covers(kb: KnowledgeBase, name: str | None, accepts: tuple[str, ...]) -> bool:
    if name is None:
        return False
    try:
        resolved = kb.resolve(name)
    except UnknownItemError:
        return False
    return resolved in accepts or name in accepts or any(a in kb.families.get(name, ()) for a in accepts)


def fill_tools(rules, steps: list[Step]) -> list[Step]:
    """A mine or dig down without a tool that needs one: the latest such tool made before it, else the lowest."""
    made: list[str] = []
    out = []
    for step in steps:
        if step.tool is None and step.type in (StepType.MINE, StepType.DIG_DOWN):
            options = _tool_options(rules, step)
            if options:
                earlier = [name for name in reversed(made) if name in options]
                step = Step(
                    type=step.type, item=step.item, count=step.count, tool=earlier[0] if earlier else options[0]
                )
        if step.type is StepType.CRAFT and step.item in rules.tool_items:
            made.append(step.item)
        out.append(step)
    return out


def _tool_options(rules, step: Step) -> tuple[str, ...]:
    """The tools that can do ``step``, lowest tier first (empty: it needs none)."""
    try:
        if step.type is StepType.DIG_DOWN:
            need = rules.dig(1).tool
        else:
            actions = [a for a in rules.ways(rules.kb.resolve(step.item or ""), step.count or 1) if a.kind == "mine"]
            need = actions[0].tool if actions else None
    except (UnknownItemError, ValueError, KeyError):
        return ()
    if need is None:
        return ()
    return tuple(rules.tools_for(need.kind, need.tier))  # lowest tier first
