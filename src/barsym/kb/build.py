"""Build a :class:`KnowledgeBase` from minecraft-data plus ``data/recipes/``.

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

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import minecraft_data

from .knowledge import Block, CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool
from .errors import DataFileError, VersionNotSupportedError
from .schema import DATA_FILES, WorldFile, WorldResource, load_data_file
from .world_params import LayerModel, MobModel, ResourceModel, WorldModel

MINECRAFT_DATA_DIR = Path(minecraft_data.__file__).parent / "data" / "data"


def _read_minecraft_data(version: str) -> dict[str, Any]:
    paths = json.loads((MINECRAFT_DATA_DIR / "dataPaths.json").read_text())["pc"]
    if version not in paths:
        known = ", ".join(v for v in paths if v.startswith("1.1"))
        raise VersionNotSupportedError(
            f"minecraft-data has no PC data for version {version!r}; known versions: {known}"
        )
    wanted = ("items", "blocks", "recipes", "materials")
    out = {}
    for category in wanted:
        folder = paths[version].get(category)
        if folder is None:
            raise VersionNotSupportedError(f"minecraft-data {version} lacks {category}.json")
        out[category] = json.loads((MINECRAFT_DATA_DIR / folder / f"{category}.json").read_text())
    return out


def load_data_dir(data_dir: Path) -> dict:
    files = {}
    for name, schema in DATA_FILES.items():
        files[name] = load_data_file(data_dir / name, schema)
    return files


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


def build_knowledge_base(version: str, data_dir: Path) -> KnowledgeBase:
    md = _read_minecraft_data(version)
    files = load_data_dir(data_dir)
    tags_file, smelting_file = files["tags.json"], files["smelting.json"]
    families_file, fuels_file = files["families.json"], files["fuels.json"]
    tools_file, resources_file = files["tools.json"], files["resources.json"]
    mobs_file, aliases_file = files["mobs.json"], files["aliases.json"]
    rules_file = files["rules.json"]

    names = {item["id"]: item["name"] for item in md["items"]}
    item_names = set(names.values())
    tags = _TagIndex(tags_file.tags, tags_file.recipe_tags)

    def check_item(name: str, where: str) -> None:
        if name not in item_names and name not in families_file.generic:
            raise DataFileError(f"{data_dir / where}: {name!r} is not a {version} item")

    for name in families_file.prefer:
        check_item(name, "families.json")
    families: dict[str, frozenset[str]] = {}
    for generic, spec in families_file.generic.items():
        if spec.tag not in tags.tags:
            raise DataFileError(f"{data_dir / 'families.json'}: field 'generic.{generic}.tag': unknown tag {spec.tag!r}")
        families[generic] = tags.tags[spec.tag]

    crafts: dict[str, list[CraftRecipe]] = {}
    for result_id, raw_list in md["recipes"].items():
        result = names[int(result_id)]
        crafts[result] = _fold_recipes(result, raw_list, names, tags)
    for extra in files["extra_recipes.json"].recipes:  # special recipes minecraft-data does not list
        check_item(extra.result, "extra_recipes.json")
        ingredients = []
        for name, count in extra.ingredients.items():
            if name.startswith("#") and name[1:] not in tags.tags:
                raise DataFileError(f"{data_dir / 'extra_recipes.json'}: {extra.result}: unknown tag {name!r}")
            if not name.startswith("#"):
                check_item(name, "extra_recipes.json")
            accepts = tuple(sorted(tags.tags[name[1:]])) if name.startswith("#") else (name,)
            ingredients.append(Ingredient(name, accepts, count))
        side = 2 if extra.grid == "2x2" else 3
        crafts.setdefault(extra.result, []).append(CraftRecipe(extra.result, extra.count, tuple(ingredients), side, side))
    for generic, members in families.items():
        crafts[generic] = _generic_recipes(generic, members, crafts, tags)
    crafts_final = {
        item: tuple(
            CraftRecipe(r.result, r.count, tuple(_with_generics(i, families) for i in r.ingredients), r.width, r.height)
            for r in recipes
        )
        for item, recipes in crafts.items()
        if recipes
    }

    def expand(names_or_tags: list[str]) -> tuple[str, ...]:
        out: list[str] = []
        for entry in names_or_tags:
            out.extend(sorted(tags.tags[entry[1:]]) if entry.startswith("#") else [entry])
        return tuple(dict.fromkeys(out))

    smelts: dict[str, list[SmeltRecipe]] = defaultdict(list)
    for entry in smelting_file.recipes:
        check_item(entry.result, "smelting.json")
        label = entry.input[0] if len(entry.input) == 1 else "|".join(entry.input)
        ingredient = _with_generics(Ingredient(label, expand(entry.input)), families)
        smelts[entry.result].append(SmeltRecipe(entry.result, ingredient, ticks=entry.cooking_time))

    for field_name, keys in (("fuels", fuels_file.fuels), ("exclude", fuels_file.exclude)):
        for key in keys:
            if key.startswith("#") and key[1:] not in tags.tags:
                raise DataFileError(f"{data_dir / 'fuels.json'}: field '{field_name}.{key}': unknown tag")
            if not key.startswith("#"):
                check_item(key, "fuels.json")
    # as in the game's furnace, an excluded item (crimson planks) stays unburnable under any entry (#planks)
    never_burn = set(expand(fuels_file.exclude))
    fuels: dict[str, float] = {}
    for key, burn in fuels_file.fuels.items():
        for item in expand([key]):
            if item not in never_burn:
                fuels.setdefault(item, burn)
    for generic, members in families.items():
        burns = [fuels[m] for m in members if m in fuels]
        if burns:
            fuels[generic] = min(burns)

    tools: dict[str, Tool] = {}
    for material, tier in tools_file.tiers.items():
        for kind in tools_file.kinds:
            name = f"{material}_{kind}"
            if name in item_names:
                tools[name] = Tool(name, kind, tier)
    tier_names: dict[int, str] = {}
    for material, tier in tools_file.tiers.items():
        tier_names.setdefault(tier, material)

    blocks = {b["name"]: b for b in md["blocks"]}
    sources: dict[str, Source] = {}
    for entry in resources_file.resources:
        check_item(entry.item, "resources.json")
        if entry.block not in blocks:
            raise DataFileError(f"{data_dir / 'resources.json'}: {entry.block!r} is not a {version} block")
        bad = [layer for layer in entry.layers if not 0 <= layer < len(resources_file.layers)]
        if bad:
            raise DataFileError(f"{data_dir / 'resources.json'}: {entry.item}: layers {bad} outside 0..{len(resources_file.layers) - 1}")
        if entry.tool is not None:
            tool = tools.get(entry.tool)
            kind, tier = (tool.kind, tool.tier) if tool else (entry.tool, 0)
        else:
            harvest = blocks[entry.block].get("harvestTools") or {}
            tiers = [tools[names[int(i)]] for i in harvest if names.get(int(i)) in tools]
            kind = tiers[0].kind if tiers else None
            tier = min((t.tier for t in tiers), default=0)
        for used in entry.uses:
            check_item(used, "resources.json")
        sources[entry.item] = Source(entry.item, "mine", entry.block, frozenset(entry.layers), kind, tier,
                                     tuple(sorted(entry.uses.items())))
    for drop in mobs_file.drops:
        check_item(drop.item, "mobs.json")
        sources.setdefault(drop.item, Source(drop.item, "kill", drop.mob, frozenset(drop.layers), None, 0))
    mobs = {drop.mob for drop in mobs_file.drops}
    for act in mobs_file.interactions:  # taken from a living mob: gathering, not hunting
        check_item(act.item, "mobs.json")
        if act.mob not in mobs:
            raise DataFileError(f"{data_dir / 'mobs.json'}: interaction {act.item}: unknown mob {act.mob!r} "
                                f"(known: {', '.join(sorted(mobs))})")
        for used in act.uses:
            check_item(used, "mobs.json")
        sources.setdefault(act.item, Source(act.item, "mine", act.mob, frozenset(act.layers), None, 0,
                                            tuple(sorted(act.uses.items()))))
    loot = {}
    for item, where in files["loot.json"].loot.items():
        check_item(item, "loot.json")
        loot[item] = where

    world_spec = files["world.json"]
    wanted = {entry.block for entry in resources_file.resources}
    wanted |= {world_spec.dig_down.soil_block, world_spec.dig_down.rock_block}
    mined_blocks, dig_speeds, durability = _mining_facts(md, names, wanted)
    world = _world_model(world_spec, data_dir / "world.json", mined_blocks, resources_file, mobs_file)

    aliases = {}
    for old, new in aliases_file.aliases.items():
        check_item(new, "aliases.json")
        aliases[old] = new
    dialects: dict[str, dict[str, str]] = {}
    for dialect, mapping in aliases_file.dialects.items():
        for old, new in mapping.items():
            check_item(new, "aliases.json")
        dialects[dialect] = dict(mapping)

    return KnowledgeBase(
        version=version,
        items=frozenset(item_names | set(families)),
        generic={g: spec.default for g, spec in families_file.generic.items()},
        families=families,
        crafts=crafts_final,
        smelts={k: tuple(v) for k, v in smelts.items()},
        fuels=fuels,
        fuel_preference=tuple(fuels_file.preference),
        sources=sources,
        tools=tools,
        tier_names=tier_names,
        dig_down_kind=tools_file.dig_down_kind,
        layers=tuple(resources_file.layers),
        aliases=aliases,
        dialects=dialects,
        prefer=tuple(families_file.prefer),
        profiles={name: RuleProfile(name, p.gather, p.table_at_hand, p.furnace_needed, p.fuel_needed,
                                  p.generic_names, p.climb, p.about, p.durability)
                  for name, p in rules_file.profiles.items()},
        default_profile=rules_file.default,
        loot=loot,
        blocks=mined_blocks,
        dig_speeds=dig_speeds,
        durability=durability,
        world=world,
    )


def _mining_facts(md: dict, names: dict[int, str], wanted: set[str]):
    """Hardness, material and harvest tools of the ``wanted`` blocks; dig speeds by material; tool durability.

    Only the blocks something is mined or dug from are kept: all ~760 would
    add half again to the warm start's unpickling for blocks no step breaks.
    minecraft-data keys tools by id; they are turned into names here, as
    everything else in the knowledge base (ids change between versions).
    """
    blocks = {}
    for raw in md["blocks"]:
        if raw["name"] not in wanted:
            continue
        hardness = raw.get("hardness")
        if hardness is None or not raw.get("diggable", True):  # bedrock, barriers, fluids: never broken
            hardness = -1.0
        harvest = frozenset(names[int(i)] for i in (raw.get("harvestTools") or {}) if int(i) in names)
        blocks[raw["name"]] = Block(raw["name"], float(hardness), raw.get("material"), harvest)
    dig_speeds = {material: {names[int(i)]: float(speed) for i, speed in speeds.items() if int(i) in names}
                  for material, speeds in md["materials"].items()}
    durability = {item["name"]: int(item["maxDurability"]) for item in md["items"] if item.get("maxDurability")}
    return blocks, dig_speeds, durability


def _resource_model(entry: WorldResource) -> ResourceModel:
    return ResourceModel(entry.density, entry.cluster, entry.drops, entry.chance)


def _world_model(spec: WorldFile, path: Path, blocks: dict[str, Block], resources, mobs) -> WorldModel:
    """world.json as a :class:`WorldModel`, checked against the other files (every mob and layer is covered)."""
    if len(spec.layers) != len(resources.layers):
        raise DataFileError(f"{path}: field 'layers': {len(spec.layers)} layers, but resources.json has "
                            f"{len(resources.layers)} ({', '.join(resources.layers)})")
    for layer, name in zip(spec.layers, resources.layers):
        if layer.name != name:
            raise DataFileError(f"{path}: field 'layers': layer {layer.name!r} where resources.json has {name!r}")
    for field_name in ("soil_block", "rock_block"):
        block = getattr(spec.dig_down, field_name)
        if block not in blocks or blocks[block].hardness < 0:
            raise DataFileError(f"{path}: field 'dig_down.{field_name}': {block!r} is not a breakable block")
    known = {r.item for r in resources.resources} | {i.item for i in mobs.interactions}
    for item in spec.resources:
        if item not in known:
            raise DataFileError(f"{path}: field 'resources.{item}': not a resource of resources.json "
                                f"or an interaction of mobs.json")
    for drop in mobs.drops:
        mob = spec.mobs.get(drop.mob)
        if mob is None:
            raise DataFileError(f"{path}: field 'mobs': no entry for {drop.mob!r} (mobs.json: it drops {drop.item})")
        if mob.drops.get(drop.item, (0, 0))[1] < 1:
            raise DataFileError(f"{path}: field 'mobs.{drop.mob}.drops': {drop.item!r} missing (mobs.json has it)")
    return WorldModel(
        layers=tuple(LayerModel(layer.name, layer.y, layer.scan_rate, layer.budget) for layer in spec.layers),
        dig_blocks_per_level=spec.dig_down.blocks_per_level,
        dig_ticks_per_level=spec.dig_down.ticks_per_level,
        soil_levels=spec.dig_down.soil_levels,
        soil_block=spec.dig_down.soil_block,
        rock_block=spec.dig_down.rock_block,
        break_delay=spec.mining.delay_ticks,
        use_ticks=spec.mining.use_ticks,
        craft_step_ticks=spec.crafting.ticks_per_step,
        craft_batch_ticks=spec.crafting.ticks_per_batch,
        smelt_step_ticks=spec.smelting.ticks_per_step,
        hit_ticks=spec.hunting.ticks_per_hit,
        chase_ticks=spec.hunting.chase_ticks,
        give_up_after=spec.hunting.give_up_after,
        controller={"mine": spec.controller.mine, "craft": spec.controller.craft, "smelt": spec.controller.smelt,
                    "kill": spec.controller.kill, "dig_down": spec.controller.dig_down,
                    "climb_up": spec.controller.climb_up},
        resources={item: _resource_model(entry) for item, entry in spec.resources.items()},
        default_surface=_resource_model(spec.default_surface),
        default_underground=_resource_model(spec.default_underground),
        mobs={name: MobModel(m.health, m.encounter_ticks, m.escape, dict(m.drops))
              for name, m in spec.mobs.items()},
    )
