"""Every crafting and smelting recipe of the knowledge base agrees with Plancraft's.

Plancraft (Dagan, Keller, Lascarides, 2024) ships the game's 1.16 recipes with
tags expanded, read from the game's own recipe files; barsym folds the same
recipes back together from minecraft-data's per-variant listing. Two independent
readings agreeing on every result is the check that the folding neither splits
what the game lets one craft mix (purpur slabs from purpur blocks and pillars)
nor merges what the game keeps apart (red dye from poppy or from red tulip).

A recipe is compared as its output count and the multiset of its slots, each
slot the set of concrete items it accepts. barsym's generic names (``logs``,
``planks``) are its own stand-ins for a family and are left out. Whether the
recipe needs the 3x3 table is compared where Plancraft gives the grid size
(shaped recipes).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from testdata import DATASETS

PLANCRAFT_RECIPES = DATASETS / "plancraft" / "recipes.json"

#: result -> why barsym and Plancraft may differ there; empty: they agree on every recipe.
KNOWN_DIFFERENCES: dict[str, str] = {
    # data/recipes/extra_recipes.json: a 1.16 special recipe (minecraft:firework_rocket) that neither
    # minecraft-data nor Plancraft's recipe files list
    "firework_rocket": "barsym adds the game's special recipe: 1 paper + 1 gunpowder -> 3 rockets",
}

Slots = tuple[tuple[tuple[str, ...], int], ...]


def _slots(slot_sets) -> Slots:
    """A multiset of slots, each a set of accepted items, in one canonical order."""
    counted = Counter(tuple(sorted(items)) for items in slot_sets)
    return tuple(sorted(counted.items()))


@pytest.fixture(scope="module")
def plancraft():
    """result -> recipe keys, for crafting and for smelting, from Plancraft's file."""
    if not PLANCRAFT_RECIPES.is_file():
        pytest.skip(
            f"Plancraft's recipe file (not shipped with barsym: only its train tasks are) not found at "
            f"{PLANCRAFT_RECIPES}; set BARSYM_DATASETS"
        )
    crafted: dict[str, set] = defaultdict(set)
    smelted: dict[str, set] = defaultdict(set)
    for recipe in json.loads(PLANCRAFT_RECIPES.read_text()):
        slots = _slots(recipe["slots"])
        if recipe["type"] == "smelting":
            smelted[recipe["result"]].add((recipe["count"], slots))
            continue
        # a shapeless recipe fits whatever grid holds its slots: no shape to compare
        table = recipe["width"] > 2 or recipe["height"] > 2 if recipe["type"] == "shaped" else None
        crafted[recipe["result"]].add((recipe["count"], slots, table))
    return crafted, smelted


def _concrete(kb, accepts) -> tuple[str, ...]:
    return tuple(a for a in accepts if a not in kb.families)


def _barsym_crafted(kb) -> dict[str, set]:
    out: dict[str, set] = defaultdict(set)
    for result, recipes in kb.crafts.items():
        if result in kb.families:
            continue  # "craft planks" is barsym's stand-in for crafting any planks
        for recipe in recipes:
            slots = _slots(_concrete(kb, i.accepts) for i in recipe.ingredients for _ in range(i.count))
            out[result].add((recipe.count, slots, recipe.needs_table))
    return out


def _barsym_smelted(kb) -> dict[str, set]:
    out: dict[str, set] = defaultdict(set)
    for result, recipes in kb.smelts.items():
        for recipe in recipes:
            out[result].add((recipe.count, _slots([_concrete(kb, recipe.input.accepts)])))
    return out


def _matches(theirs: tuple, ours: tuple) -> bool:
    """Same count and slots, and the same station need where Plancraft states the grid size."""
    return theirs[:2] == ours[:2] and (len(theirs) < 3 or theirs[2] is None or theirs[2] == ours[2])


def _disagreements(theirs: dict[str, set], ours: dict[str, set]) -> dict[str, str]:
    """result -> what differs, for every result whose recipes do not pair up both ways."""
    out = {}
    for result in sorted(set(theirs) | set(ours)):
        mine, other = ours.get(result, set()), theirs.get(result, set())
        only_plancraft = [t for t in other if not any(_matches(t, o) for o in mine)]
        only_barsym = [o for o in mine if not any(_matches(t, o) for t in other)]
        if only_plancraft or only_barsym:
            out[result] = (
                f"Plancraft only {sorted(only_plancraft, key=repr)}; barsym only {sorted(only_barsym, key=repr)}"
            )
    return out


def _check(kind: str, theirs: dict[str, set], ours: dict[str, set]) -> None:
    found = _disagreements(theirs, ours)
    unexpected = {r: d for r, d in found.items() if r not in KNOWN_DIFFERENCES}
    agree = len(set(theirs) - set(found))
    lines = [f"{agree} of {len(theirs)} {kind} outputs agree with Plancraft; {len(unexpected)} unexpected mismatches:"]
    lines += [f"  {result}: {diff}" for result, diff in unexpected.items()]
    assert not unexpected, "\n".join(lines)


def test_every_crafting_recipe_agrees_with_plancraft(kb, plancraft):
    crafted, _ = plancraft
    _check("crafted", crafted, _barsym_crafted(kb))


def test_every_smelting_recipe_agrees_with_plancraft(kb, plancraft):
    _, smelted = plancraft
    _check("smelted", smelted, _barsym_smelted(kb))


def test_known_differences_are_still_different(kb, plancraft):
    """An entry whose recipes now agree is stale: drop it so the list stays evidence."""
    crafted, smelted = plancraft
    found = _disagreements(crafted, _barsym_crafted(kb)) | _disagreements(smelted, _barsym_smelted(kb))
    assert sorted(set(KNOWN_DIFFERENCES) - set(found)) == []
