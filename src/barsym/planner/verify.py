"""Check one decomposition against the knowledge base: the oracle for any decomposer.

An LLM may answer "to get 1 iron_pickaxe, craft it from 3 iron_ingot" and forget
the sticks or the crafting table. :func:`check_decomposition` lists every such
problem in plain words, so the LLM decomposer can feed them back to the model,
retry, or fall back to the symbolic decomposer. The check needs no plan context:
whatever a decomposition relied on from the plan so far (spare units of an
earlier batch, fuel already budgeted) it must declare in ``yields`` and
``fuel_credit``, and the check takes those claims at face value.

:func:`subgoal_roles` says what each subgoal is for (ingredient, fuel, tool,
station, layer). The planner needs it to know which needs are consumed and
which are only used, whoever produced the decomposition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..kb import EPSILON, Action, KnowledgeBase, RecipeFit, Rules, UnknownItemError, rules_for
from ..model import Goal, Step, StepType
from .decomposer import Decomposition, goal_layer


def _resolve(kb: KnowledgeBase, name: str | None) -> str | None:
    if not name:
        return None
    try:
        return kb.resolve(name)
    except UnknownItemError:
        return None


def _units(kb: KnowledgeBase, subgoals: Sequence[Goal]) -> Counter:
    units: Counter = Counter()
    for goal in subgoals:
        item = _resolve(kb, goal.item) if goal_layer(goal) is None else None
        if item is not None:
            units[item] += goal.count
    return units


def _recipe(rules: Rules, item: str, count: int, units: Counter) -> RecipeFit | None:
    """The recipe the subgoals pay for, by the rule book's one rule (as the simulator reads an inventory)."""
    return rules.fitting_recipe(item, count, units)


def _ways(rules: Rules, item: str, kind: str, count: int | None = None) -> list[Action]:
    """The rule book's actions of ``kind`` that make ``item``."""
    return [a for a in rules.ways(item, count) if a.kind == kind]


def _gathering(rules: Rules, kind: str, item: str, count: int | None = None) -> Action | None:
    try:
        return rules.action(kind, item, count)
    except KeyError:
        return None


def subgoal_roles(kb: KnowledgeBase, step: Step, subgoals: Sequence[Goal], rules: Rules | None = None) -> list[str]:
    """Role of each subgoal: ingredient, fuel, tool, station, layer, extra or unknown (read from the action schema)."""
    rules = rules_for(kb, rules)
    item = _resolve(kb, step.item)
    units = _units(kb, subgoals)
    craft = rules.fitting_action(item, 1, units) if step.type is StepType.CRAFT and item else None  # which recipe
    smelts = _ways(rules, item, "smelt") if step.type is StepType.SMELT and item else []
    gather = _gathering(rules, step.type.value, item) if step.type in (StepType.MINE, StepType.KILL) and item else None
    dig = rules.dig(1).tool
    roles = []
    for goal in subgoals:
        if goal_layer(goal) is not None:
            roles.append("layer")
            continue
        need = _resolve(kb, goal.item)
        if need is None:
            roles.append("unknown")
        elif step.type is StepType.DIG_DOWN:
            roles.append("tool" if dig and rules.is_tool(need, dig.kind, dig.tier) else "extra")
        elif step.type is StepType.CRAFT:
            if craft is not None and craft.accepts(need):
                roles.append("ingredient")
            else:
                roles.append("station" if need == rules.table_station else "extra")
        elif step.type is StepType.SMELT:
            if any(a.accepts(need) for a in smelts):
                roles.append("ingredient")
            elif need == rules.furnace_station:
                roles.append("station")
            else:
                roles.append("fuel" if rules.fuel_needed and rules.fuel_value(need) > 0 else "extra")
        else:
            tool = gather.tool if gather else None
            if gather is not None and gather.accepts(need):
                roles.append("ingredient")
            else:
                roles.append("tool" if tool and rules.is_tool(need, tool.kind, tool.tier) else "extra")
    return roles


def check_decomposition(
    kb: KnowledgeBase, goal: Goal, decomposition: Decomposition, rules: Rules | None = None
) -> list[str]:
    """Problems with ``decomposition`` as an answer to ``goal``; empty means acceptable."""
    rules = rules_for(kb, rules)
    step = decomposition.step
    layer = goal_layer(goal)
    if layer is not None:
        if not rules.can_gather:
            return [f"under the {rules.name} rules there is no digging down"]
        return _check_dig(rules, layer, decomposition)
    target = _resolve(kb, goal.item)
    if target is None:
        return [f"unknown goal item {goal.item!r}"]
    if step.type is StepType.DIG_DOWN:
        return [f"a dig down does not make {target}"]
    made = _resolve(kb, step.item)
    if made is None:
        return [f"the step names an unknown item {step.item!r}"]
    problems = []
    if made not in kb.acceptable(target):
        problems.append(f"the step makes {made}, not {target}")
    if step.count != goal.count:
        problems.append(f"wrong count: the step is for {step.count} {made}, the goal needs {goal.count}")
    unknown = [g.item for g in decomposition.subgoals if goal_layer(g) is None and _resolve(kb, g.item) is None]
    problems += [f"subgoal names an unknown item {name!r}" for name in unknown]
    if step.type is StepType.CRAFT:
        problems += _check_craft(rules, made, decomposition)
    elif step.type is StepType.SMELT:
        problems += _check_smelt(rules, made, decomposition)
    elif not rules.can_gather:
        problems.append(
            f"under the {rules.name} rules nothing can be mined or killed: {made} must be crafted "
            f"or smelted from the inventory"
        )
    else:
        problems += _check_gather(rules, made, decomposition)
    return problems


def _extras(decomposition: Decomposition, roles: list[str], what: str) -> list[str]:
    return [
        f"subgoal {g.count} {g.item} is not needed to {what}"
        for g, role in zip(decomposition.subgoals, roles)
        if role == "extra"
    ]


def _check_craft(rules: Rules, item: str, d: Decomposition) -> list[str]:
    kb = rules.kb
    if not _ways(rules, item, "craft"):
        return [f"{item} has no crafting recipe (it is obtained by {' or '.join(rules.producers(item)) or 'nothing'})"]
    units = _units(kb, d.subgoals)
    problems = []
    if d.made < (d.step.count or 0) and d.yields is None:
        problems.append("the step makes fewer units than it is asked for")
    fit = _recipe(rules, item, d.made, units)
    assert fit is not None
    for ingredient, need, have in fit.short:
        problems.append(
            f"missing ingredient: {fit.batches} craft(s) of {item} need {need} {ingredient.label.lstrip('#')}, "
            f"the subgoals give {have}"
        )
    if fit.station_missing:
        problems.append(f"missing station: {item}'s recipe is larger than 2x2 and needs a crafting_table subgoal")
    return problems + _extras(d, subgoal_roles(kb, d.step, d.subgoals, rules), f"craft {item}")


def _check_smelt(rules: Rules, item: str, d: Decomposition) -> list[str]:
    kb = rules.kb
    count = d.step.count or 0
    ways = _ways(rules, item, "smelt", count)
    if not ways:
        return [f"{item} cannot be smelted (it is obtained by {' or '.join(rules.producers(item)) or 'nothing'})"]
    action = ways[0]  # station and fuel are the same for every smelting recipe
    units = _units(kb, d.subgoals)
    roles = subgoal_roles(kb, d.step, d.subgoals, rules)
    problems = []
    recipe, _, short = rules.smelt_recipe(item, count, units)
    if short:
        problems.append(
            f"missing ingredient: smelting {count} {item} needs {count} {recipe.input.label}, "
            f"the subgoals give {count - short}"
        )
    if action.station and units[action.station] == 0:
        problems.append(f"missing station: smelting {item} needs a {action.station} subgoal")
    burn = d.fuel_credit + sum(g.count * rules.fuel_value(g.item) for g, r in zip(d.subgoals, roles) if r == "fuel")
    if action.fuel and burn + EPSILON < action.fuel:
        problems.append(
            f"missing fuel: smelting {count} {item} needs fuel for {action.fuel:g} items, "
            f"the subgoals burn for {burn:g}"
        )
    return problems + _extras(d, roles, f"smelt {item}")


def _check_gather(rules: Rules, item: str, d: Decomposition) -> list[str]:
    kb = rules.kb
    verb = d.step.type.value
    action = _gathering(rules, verb, item, d.step.count or 0)
    if action is None:
        ways = " or ".join(rules.producers(item)) or "nothing"
        return [f"{item} cannot be obtained by '{verb}' (it is obtained by {ways})"]
    roles = subgoal_roles(kb, d.step, d.subgoals, rules)
    problems = []
    if action.tool is not None:
        kind, tier = action.tool.kind, kb.tier_name(action.tool.tier)
        if "tool" not in roles:
            problems.append(f"missing tool: {verb} {item} needs a {tier} {kind} or better as a subgoal")
        named = _resolve(kb, d.step.tool)
        if d.step.tool and (named is None or not rules.is_tool(named, kind, action.tool.tier)):
            problems.append(f"wrong tool: {verb} {item} needs a {tier} {kind} or better, the step names {d.step.tool}")
    units = _units(kb, d.subgoals)
    for slot in action.needs:
        name = slot.accepts[0]
        if units[name] < slot.count:
            problems.append(
                f"missing ingredient: {verb} {d.step.count} {item} uses {slot.count} {name}, "
                f"the subgoals give {units[name]}"
            )
    if action.layer > 0:
        asked = [goal_layer(g) for g in d.subgoals if goal_layer(g) is not None]
        if not any(layer in action.layers for layer in asked):
            where = ", ".join(str(n) for n in sorted(action.layers))
            problems.append(
                f"missing layer: {item} is found on layer {where}; a layer:{action.layer} subgoal (dig down) is missing"
            )
    return problems + _extras(d, roles, f"{verb} {item}")


def _check_dig(rules: Rules, layer: int, d: Decomposition) -> list[str]:
    kb = rules.kb
    step = d.step
    if not 1 <= layer <= kb.deepest_layer:
        return [f"layer {layer} does not exist (layers 1 to {kb.deepest_layer} are below the surface)"]
    if step.type is not StepType.DIG_DOWN:
        return [f"a layer goal is reached by a dig down step, not {step.type.value}"]
    problems = []
    tool = _resolve(kb, step.tool)
    need = rules.dig(layer).tool
    assert need is not None
    if tool is None or not rules.is_tool(tool, need.kind, need.tier):
        problems.append(f"dig down needs a {need.kind} as its tool, got {step.tool!r}")
    units = _units(kb, d.subgoals)
    if tool is not None and units[tool] == 0:
        problems.append(f"missing tool: the subgoals do not obtain the {tool} the dig down uses")
    if layer > 1 and not any(goal_layer(g) == layer - 1 for g in d.subgoals):
        problems.append(
            f"missing layer: digging down to layer {layer} starts on layer {layer - 1}; "
            f"subgoal layer:{layer - 1} is missing"
        )
    roles = subgoal_roles(kb, step, d.subgoals, rules)
    extra = [g for g, r in zip(d.subgoals, roles) if r == "extra" or (r == "layer" and goal_layer(g) != layer - 1)]
    problems += [f"subgoal {g.count} {g.item} is not needed to dig down" for g in extra]
    return problems
