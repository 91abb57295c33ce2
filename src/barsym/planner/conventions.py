"""The stricter checks a ``bar`` answer must pass: no waste, and BAR's conventions.

:func:`barsym.planner.check_decomposition` asks "does this decomposition make
the goal from enough?". BAR's expert plans, and the symbolic decomposer that
reproduces them, are also exact and settle the game's free choices one way, so
an answer of the model is held to that too. These checks are the verifier's
(they read the rule book's action schema and the symbolic decomposer's
choices, never the model), which is why they live here and not in the LLM
decomposer that calls them:

- :func:`waste`: units asked beyond what the step uses (a second crafting
  table, 100 diamonds for one pickaxe, a table for a 2x2 recipe, fuel for more
  items than are smelted); the plan would run, wastefully.
- :func:`conventions`: the choices the game allows but BAR makes one way
  (docs/planning.md): one dig down per pickaxe tier, the lowest tool that can, planks
  as fuel, the family name of a slot.
"""

from __future__ import annotations

from collections import Counter

from ..kb import EPSILON, Action, Rules
from ..model import Goal, StepType
from .decomposer import Decomposition, PlanContext, goal_layer
from .symbolic import SymbolicDecomposer
from .verify import subgoal_roles

__all__ = ["conventions", "fitting_craft", "waste"]


def _units(rules: Rules, subgoals: tuple[Goal, ...]) -> Counter:
    kb, units = rules.kb, Counter[str]()
    for g in subgoals:
        if goal_layer(g) is None and kb.is_known(g.item):
            units[kb.resolve(g.item)] += g.count
    return units


def fitting_craft(rules: Rules, item: str, count: int, subgoals: tuple[Goal, ...]) -> Action | None:
    """The craft of ``count`` ``item`` by the recipe the subgoals are for (the rule book's one rule, read for one
    batch as the verifier reads them), or None when ``item`` has no recipe."""
    chosen = rules.fitting_action(item, 1, _units(rules, subgoals))
    return None if chosen is None else rules.action("craft", item, count, chosen.recipe)


def waste(rules: Rules, d: Decomposition) -> list[str]:
    """Units asked beyond what the step uses: the plan would still run, but wastefully."""
    step, kb = d.step, rules.kb
    roles = subgoal_roles(kb, step, d.subgoals, rules)
    units: Counter = Counter()
    for goal, role in zip(d.subgoals, roles):
        if role in ("tool", "station") and goal.count > 1:
            return [f"one {goal.item} is enough: it is used, not consumed"]
        if role in ("ingredient", "fuel"):
            units[kb.resolve(goal.item)] += goal.count
    item = kb.resolve(step.item) if step.item else None
    craft = fitting_craft(rules, item, d.made, d.subgoals) if step.type is StepType.CRAFT and item else None
    if craft is not None:
        if "station" in roles and craft.station is None:
            return [f"{item} fits the 2x2 inventory grid: no crafting_table needed"]
        need = sum(slot.count for slot in craft.needs)
        if sum(units.values()) > need:
            return [
                f"too many ingredients: {craft.runs} craft(s) of {item} use {need} unit(s) in all, "
                f"the subgoals ask for {sum(units.values())}"
            ]
    if step.type is StepType.SMELT:
        fuels = [(g, rules.fuel_value(g.item)) for g, r in zip(d.subgoals, roles) if r == "fuel"]
        inputs = sum(g.count for g, r in zip(d.subgoals, roles) if r == "ingredient")
        if inputs > (step.count or 0):
            return [f"too many ingredients: smelting {step.count} {item} takes {step.count}, not {inputs}"]
        burn = d.fuel_credit + sum(g.count * v for g, v in fuels)
        if fuels and burn - min(v for _, v in fuels) >= (step.count or 0) - EPSILON:
            return [f"too much fuel: the fuel burns for {burn:g} items, {step.count} are smelted"]
    return []


def conventions(
    symbolic: SymbolicDecomposer, asked: Goal, d: Decomposition, root: str, context: PlanContext | None = None
) -> list[str]:
    """Choices the game allows but BAR's plans settle one way, as ``symbolic`` (the decomposer) makes them.

    Callers check this only once an answer is otherwise right, so the model
    hears about real mistakes first. Graph-mode grammars offer only these
    choices already. ``root`` is the item the whole plan is for; with the plan's
    ``context``, a tool the start inventory holds is the conventional one where
    it serves (it is at hand; the lowest tier would have to be made).
    """
    step, rules = d.step, symbolic.rules
    kb = rules.kb
    layer = goal_layer(asked)
    if layer is not None and step.tool:
        wanted = symbolic.dig_tool(layer, root, context)
        if kb.resolve(step.tool) != wanted:
            return [
                f"dig down to layer {layer} with the {wanted}: BAR digs once per pickaxe tier, "
                f"right after making that pickaxe"
            ]
    gathers = step.type in (StepType.MINE, StepType.KILL) and step.item and layer is None
    action = None
    if gathers:
        try:
            action = rules.action(step.type.value, kb.resolve(step.item))
        except KeyError:  # not a raw resource of that kind: the verifier has said so
            action = None
    tool = kb.resolve(step.tool) if step.tool and kb.is_known(step.tool) else None
    if action is not None and action.tool and tool is not None and rules.is_tool(tool, action.tool.kind):
        lowest = symbolic.tool_for(action.tool.kind, action.tool.tier, context)
        if tool != lowest:
            held = context is not None and context.start.count(lowest) > 0
            why = "it is in the start inventory" if held else "the lowest tier that can: a better tool is not needed"
            return [f"mine {step.item} with the {lowest}, {why}"]
    roles = subgoal_roles(kb, step, d.subgoals, rules)
    for goal, role in zip(d.subgoals, roles):
        if role not in ("fuel", "ingredient") or not kb.is_known(goal.item):
            continue
        name = kb.resolve(goal.item)
        if role == "fuel" and name != symbolic.fuel:
            return [f"budget fuel as {symbolic.fuel} (BAR's convention), not {goal.item}"]
        if role == "ingredient" and rules.generic_names:
            family = next((g for g in kb.acceptable(name) if g in kb.families and g != name), None)
            if family is not None:
                return [f"write the family name {family}, not {goal.item}: any kind of it will do"]
    return []
