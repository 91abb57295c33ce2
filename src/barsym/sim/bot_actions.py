"""A plan as a bot runs it (``--format actions``): every step in the game version's item and block ids.

Why: a plan's own words (``mine 4 logs``, ``dig down``, ``craft 13 planks``)
still had to be mapped by hand to what a mineflayer bot calls: an item id for
``bot.recipesFor``, a block id for ``bot.findBlock``, the station to stand at,
the tool to equip, how many crafts to run. Here the plan is played forward
(:func:`.rollout.rollout`), so each step says exactly what it used where the
plan left a choice: the recipe the rule book picks for the inventory at that
point, the fuel that burned, the tool the step names or the lowest that serves.

An item is given as ``{"name": barsym's name, "ids": [...]}``: the ids of
every item that counts (a generic ``logs`` lists every log; a recipe slot every
item it accepts). Ids are minecraft-data's ``name`` of the version the
knowledge base is for; before 1.13 an item is an id and a metadata value, so a
``"metadata"`` list runs beside ``"ids"`` (``spruce_planks`` is ``planks`` with
metadata 1). Blocks likewise. Counts are in game units: items, crafts run,
items smelted; depth as the layer and its y level. docs/action_schema.md shows
a mineflayer bot reading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..kb import Action, KnowledgeBase, Rules, rules_for
from ..model import Step, StepType
from .rollout import StepOutcome, rollout
from .simulator import Simulator
from .state import State

FORMAT = "barsym-actions"
FORMAT_VERSION = 1


class _Ids:
    """barsym's names as the version's game ids."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.legacy = bool(kb.item_ids)

    def _items(self, names: Sequence[str]) -> list[str]:
        out: list[str] = []
        for name in names:
            out.extend(sorted(self.kb.families[name]) if name in self.kb.families else [name])
        return list(dict.fromkeys(out))

    def _ref(self, name: str, members: list[str], table: dict[str, tuple[str, int]]) -> dict[str, Any]:
        if not self.legacy:
            return {"name": name, "ids": members}
        pairs = [table.get(m, (m, 0)) for m in members]
        return {"name": name, "ids": [p[0] for p in pairs], "metadata": [p[1] for p in pairs]}

    def item(self, name: str, accepts: Sequence[str] | None = None) -> dict[str, Any]:
        """An item (or a recipe slot named ``name`` that accepts ``accepts``) and the ids that count as it."""
        return self._ref(name, self._items(accepts if accepts is not None else [name]), self.kb.item_ids)

    def fuel(self, name: str) -> dict[str, Any]:
        """A fuel burned: of a generic ``planks``, only the members that burn (not crimson or warped)."""
        burning = [m for m in self._items([name]) if self.kb.fuel_value(m) > 0]
        return self._ref(name, burning or [name], self.kb.item_ids)

    def blocks(self, origin: str, item: str) -> dict[str, Any]:
        """The blocks a mined item comes from: its own, the deepslate form, every family member's for ``logs``."""
        natural = [origin]
        if item in self.kb.families:  # logs: every log that grows (not the stripped or bark-only blocks)
            members = sorted(self.kb.families[item])
            natural = [m for m in members if m.endswith(("_log", "_stem")) and not m.startswith("stripped_")] or natural
        found: list[str] = []
        for block in natural:
            found.append(block)
            found.extend(self.kb.ore_variants.get(block, ()))
        return self._ref(origin, list(dict.fromkeys(found)), self.kb.block_ids)


def _layer(kb: KnowledgeBase, layer: int) -> dict[str, Any]:
    """A layer as a bot finds it: its name and the release's y level (1.18 moved the deep ores down)."""
    name = kb.layers[layer] if layer < len(kb.layers) else str(layer)
    y = kb.world.layers[layer].y if kb.world is not None and layer < len(kb.world.layers) else None
    return {"layer": layer, "name": name, "y": kb.layer_y.get(name, y)}


def _tool(ids: _Ids, rules: Rules, action: Action, named: str | None) -> dict[str, Any] | None:
    if action.tool is None:
        return None
    need = action.tool
    return {
        "kind": need.kind,
        "min_tier": rules.kb.tier_name(need.tier),
        "use": ids.item(named or need.options[0]),
        "any_of": ids.item(need.kind, need.options),
    }


def _craft(ids: _Ids, rules: Rules, item: str, step: Step, before: State) -> dict[str, Any]:
    action = rules.fitting_action(item, step.count or 1, before.counts)
    assert action is not None  # the step ran: a recipe fitted
    return {
        "crafts": action.runs,
        "makes": action.makes,
        "recipe": [
            {
                **ids.item(slot.label.lstrip("#"), slot.accepts),
                "per_craft": slot.count // action.runs,
                "count": slot.count,
            }
            for slot in action.needs
        ],
        "grid": "3x3" if action.station is not None or rules.profile.table_at_hand else "2x2",
        "station": ids.item(action.station) if action.station else None,
    }


def _smelt(ids: _Ids, rules: Rules, item: str, outcome: StepOutcome) -> dict[str, Any]:
    transition = outcome.transition
    assert transition is not None
    consumed = set(transition.consumed)
    ways = [a for a in rules.ways(item, outcome.step.count) if a.kind == "smelt"]
    action = next((a for a in ways if consumed & set(a.needs[0].accepts)), ways[0])
    slot = action.needs[0]
    return {
        "input": {**ids.item(slot.label.lstrip("#"), slot.accepts), "count": slot.count},
        "station": ids.item(action.station) if action.station else None,
        "fuel": [{**ids.fuel(name), "count": n} for name, n in sorted(transition.fuel.items())],
        "burn_needed": action.fuel,  # in items smelted (coal burns for 8)
    }


def _gather(ids: _Ids, rules: Rules, item: str, step: Step) -> dict[str, Any]:
    action = rules.action(step.type.value, item, step.count)
    origin = action.origin or item
    mob = step.type is StepType.KILL or origin not in rules.kb.blocks  # milking a cow is gathered, from a mob
    where = {"entity": origin} if mob else {"blocks": ids.blocks(origin, item)}
    return {
        **where,
        "tool": _tool(ids, rules, action, step.tool),
        "uses": [{**ids.item(slot.accepts[0]), "count": slot.count} for slot in action.needs],
        "layers": [_layer(rules.kb, layer) for layer in sorted(action.layers)],
    }


def _one(ids: _Ids, rules: Rules, outcome: StepOutcome) -> dict[str, Any]:
    step, kb = outcome.step, rules.kb
    out: dict[str, Any] = {"step": outcome.index, "action": step.type.value, "text": str(step)}
    if outcome.failure is not None:
        return {**out, "error": outcome.failure.message}
    if step.type.moves:
        after = outcome.after.layer
        out.update({"from": _layer(kb, outcome.before.layer), "to": _layer(kb, after)})
        if step.type is StepType.DIG_DOWN:
            out["tool"] = _tool(ids, rules, rules.dig(max(after, 1)), step.tool)
        return out
    assert outcome.transition is not None and outcome.transition.item is not None
    item = outcome.transition.item
    out.update({"item": ids.item(item), "count": step.count})
    if step.type is StepType.CRAFT:
        out.update(_craft(ids, rules, item, step, outcome.before))
    elif step.type is StepType.SMELT:
        out.update(_smelt(ids, rules, item, outcome))
    else:
        out.update(_gather(ids, rules, item, step))
    return out


def bot_actions(
    kb: KnowledgeBase, steps: Sequence[Step], start: State | None = None, rules: Rules | str | None = None
) -> dict[str, Any]:
    """The plan ``steps`` played from ``start``, each step in game ids (a step that fails says why, in ``error``)."""
    book = rules_for(kb, rules)
    ids = _Ids(kb)
    played = rollout(Simulator(kb, book), steps, start)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "minecraft": kb.version,
        "ids": "legacy id + metadata" if ids.legacy else "name",
        "rules": book.name,
        "valid": played.ok,
        "steps": [_one(ids, book, outcome) for outcome in played.outcomes],
    }
