"""Folding minecraft-data's enumerated recipe variants into barsym's recipes (see :mod:`barsym.kb.build`).

minecraft-data lists one crafting recipe per variant: the game's recipe names,
for each key symbol of its grid, a tag or a list of items, and minecraft-data
enumerates every combination (a crafting_table recipe for each kind of planks;
8 x 8 = 64 barrel variants; a purpur slab from purpur blocks and one from
purpur pillars). The game lets each grid position take any alternative, so one
craft may mix them (2 purpur blocks and 1 pillar make slabs). Folding undoes the
enumeration in two passes:

1. Variants that differ only by members of one crafting tag fold into one
   recipe whose positions accept the members seen there.
2. Recipes left with the same shape fold when some positions always vary
   together (the positions of one key symbol) and the recipes are exactly every
   combination of those positions' alternatives: the symbol then accepts all of
   them. A lone varying position is left split: one item fills it either way,
   and it is how the game keeps separate recipes apart (red dye from poppy, from
   red tulip, from beetroot), which the enumeration cannot tell from a list.

Only positions that really vary are widened: a recipe that names
``stone_bricks`` keeps exactly that item.
"""

from __future__ import annotations

import math
from collections import defaultdict

from .knowledge import CraftRecipe, Ingredient


class _TagIndex:
    """Tag look-ups used to fold minecraft-data's per-variant recipes."""

    def __init__(self, tags: dict[str, list[str]], recipe_tags: list[str]):
        self.tags = {name: frozenset(members) for name, members in tags.items()}
        by_set: dict[frozenset[str], str] = {}
        for name, members in sorted(self.tags.items()):
            by_set.setdefault(members, name)
        self._by_set = by_set
        self._group: dict[str, str] = {}
        # the largest crafting tag an item belongs to groups its recipe variants
        for name in sorted(recipe_tags, key=lambda n: len(self.tags.get(n, ()))):
            for member in self.tags.get(name, ()):
                self._group[member] = name

    def group_key(self, item: str) -> str:
        tag = self._group.get(item)
        return "#" + tag if tag else item

    def label(self, items: frozenset[str]) -> str:
        """``#tag`` when the items are exactly one tag, else ``a|b``: never widen."""
        if len(items) == 1:
            (only,) = items
            return only
        tag = self._by_set.get(items)
        return "#" + tag if tag else "|".join(sorted(items))


#: (count, width, height, shaped, occupied grid cells): recipes whose positions line up
Shape = tuple[int, int, int, bool, tuple[bool, ...]]
#: what each occupied position of a recipe accepts, in grid (or sorted shapeless) order
Cells = tuple[frozenset[str], ...]


def _fold_tag_variants(raw_recipes: list[dict], names: dict[int, str], tags: _TagIndex) -> list[tuple[Shape, Cells]]:
    """Pass 1: variants whose items fall in the same crafting tag at every position are one recipe.

    Each position then accepts exactly the items seen there.
    """
    groups: dict[tuple, list[list[str]]] = defaultdict(list)
    for raw in raw_recipes:
        if "inShape" in raw:
            rows = raw["inShape"]
            height, width = len(rows), max(len(r) for r in rows)
            occupied = tuple(c is not None for row in rows for c in row + [None] * (width - len(row)))
            cells = [names[c] for row in rows for c in row if c is not None]
            shaped = True
        else:
            cells = [names[c] for c in raw["ingredients"]]
            height, width = (1, len(cells)) if len(cells) <= 2 else (2, 2) if len(cells) <= 4 else (3, 3)
            occupied = (True,) * len(cells)
            shaped = False
        keys = [tags.group_key(c) for c in cells]
        if not shaped:
            order = sorted(range(len(cells)), key=lambda i: (keys[i], cells[i]))
            cells = [cells[i] for i in order]
            keys = [keys[i] for i in order]
        shape = (raw["result"]["count"], width, height, shaped, occupied)
        groups[(shape, tuple(keys))].append(cells)
    return [
        (shape, tuple(frozenset(v[position] for v in variants) for position in range(len(variants[0]))))
        for (shape, _keys), variants in groups.items()
    ]


def _fold_symbols(recipes: list[Cells]) -> list[Cells]:
    """Pass 2: fold same-shaped recipes that enumerate a key symbol's alternatives.

    Positions that hold the same alternative in every recipe form one symbol.
    Symbols of two or more positions may fold; a lone position splits the
    recipes (see the module docstring). Within a split, the recipes fold only if
    they are every combination of their symbols' alternatives: two separate
    recipes that happen to share a shape are not a product and stay apart.
    """
    if len(recipes) < 2:
        return recipes
    symbols: dict[tuple[frozenset[str], ...], list[int]] = defaultdict(list)
    for position in range(len(recipes[0])):
        symbols[tuple(r[position] for r in recipes)].append(position)
    mixable = [ps for ps in symbols.values() if len(ps) > 1]
    lone = [ps[0] for ps in symbols.values() if len(ps) == 1]
    splits: dict[tuple[frozenset[str], ...], list[Cells]] = defaultdict(list)
    for recipe in recipes:
        splits[tuple(recipe[p] for p in lone)].append(recipe)
    out: list[Cells] = []
    for split in splits.values():
        alternatives = [{r[ps[0]] for r in split} for ps in mixable]
        disjoint = all(sum(map(len, alts)) == len(frozenset().union(*alts)) for alts in alternatives)
        if len(split) < 2 or not disjoint or math.prod(map(len, alternatives)) != len(set(split)):
            out.extend(split)
            continue
        folded = list(split[0])
        for ps, alts in zip(mixable, alternatives):
            for position in ps:
                folded[position] = frozenset().union(*alts)
        out.append(tuple(folded))
    return out


def _fold_recipes(result: str, raw_recipes: list[dict], names: dict[int, str], tags: _TagIndex):
    """A result's minecraft-data variants folded into the game's recipes, equal positions pooled."""
    by_shape: dict[Shape, list[Cells]] = defaultdict(list)
    for shape, cells in _fold_tag_variants(raw_recipes, names, tags):
        by_shape[shape].append(cells)

    recipes = []
    for (count, width, height, _shaped, _occupied), same_shape in by_shape.items():
        for cells in _fold_symbols(same_shape):
            counted: dict[frozenset[str], int] = defaultdict(int)
            for seen in cells:
                counted[seen] += 1
            ingredients = tuple(
                Ingredient(label=tags.label(seen), accepts=tuple(sorted(seen)), count=n) for seen, n in counted.items()
            )
            recipes.append(CraftRecipe(result, count, ingredients, width, height))
    recipes.sort(key=lambda r: (r.needs_table, sum(i.count for i in r.ingredients), r.ingredients[0].label))
    return recipes


def _with_generics(ingredient: Ingredient, families: dict[str, frozenset[str]]) -> Ingredient:
    """Let a generic name (``planks``) stand in for any member it shares with ``accepts``."""
    extra = tuple(g for g, members in families.items() if members.intersection(ingredient.accepts))
    if not extra:
        return ingredient
    return Ingredient(ingredient.label, ingredient.accepts + extra, ingredient.count)


def _generic_recipes(generic: str, members: frozenset[str], crafts: dict[str, list[CraftRecipe]], tags: _TagIndex):
    """A generic item is crafted like any of its members, with the inputs pooled."""
    pooled: dict[tuple, list[CraftRecipe]] = defaultdict(list)
    for member in sorted(members):
        for recipe in crafts.get(member, ()):
            if any(members.intersection(i.accepts) for i in recipe.ingredients):
                continue  # oak_wood from oak_log: not a way to get "logs"
            shape = (recipe.count, recipe.width, recipe.height, tuple(i.count for i in recipe.ingredients))
            pooled[shape].append(recipe)
    out = []
    for (count, width, height, counts), recipes in pooled.items():
        ingredients = []
        for position, n in enumerate(counts):
            accepts = tuple(dict.fromkeys(a for r in recipes for a in r.ingredients[position].accepts))
            ingredients.append(Ingredient(tags.label(frozenset(accepts)), accepts, n))
        out.append(CraftRecipe(generic, count, tuple(ingredients), width, height))
    return out
