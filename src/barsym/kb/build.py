"""Build a :class:`KnowledgeBase` from minecraft-data plus ``data/recipes/``.

One function per part of the knowledge base, each reading its data files and
checking every name against the game version (a bad entry is a
:class:`DataFileError` naming the file and field): families, crafting recipes
(minecraft-data's enumerated variants folded back, :mod:`.build_recipes`),
smelting, fuels, tools, raw resources and mobs, loot, aliases; the execution
worlds' facts come from :mod:`.build_world`. :func:`build_knowledge_base` puts
them together.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .build_recipes import _fold_recipes, _fold_symbols, _generic_recipes, _TagIndex, _with_generics
from .build_versions import Fit, fit_files, fit_smelting, fit_tags
from .build_world import _mining_facts, _world_model
from .errors import DataFileError, VersionNotSupportedError
from .knowledge import CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool
from .legacy import flatten, read_legacy
from .schema import DATA_FILES, SmeltingFile, TagsFile, load_data_file
from .versions import MINECRAFT_DATA_ENV, NEEDED, data_paths, data_set, installed, pre_flattening

__all__ = ["build_knowledge_base", "load_data_dir", "_fold_symbols"]


def _read_minecraft_data(version: str, wanted: tuple[str, ...] = NEEDED) -> dict[str, Any]:
    """minecraft-data's files for ``version``, from whichever installed copy serves it (:mod:`.versions`)."""
    found = data_paths(version)
    if found is None:
        known = ", ".join(installed()) or "none"
        raise VersionNotSupportedError(
            f"minecraft-data has no data for Minecraft {version!r}; installed: {known} ({MINECRAFT_DATA_ENV} "
            f"may name the npm package's data folder for newer releases)"
        )
    folder, paths = found
    out = {}
    for category in wanted:
        out[category] = json.loads((folder / paths[category] / f"{category}.json").read_text(encoding="utf-8"))
    return out


def load_data_dir(data_dir: Path) -> dict:
    files = {}
    for name, schema in DATA_FILES.items():
        files[name] = load_data_file(data_dir / name, schema)
    return files


@dataclass
class _Sources:
    """What every part reads: minecraft-data, the data files, and the version's item names."""

    version: str
    data_dir: Path
    md: dict[str, Any]
    files: dict
    names: dict[int, str]
    item_names: set[str]
    tags: _TagIndex
    recipe_names: dict[int, str]  # the ids of md["recipes"] (before 1.13: the flattening release's)
    keep: set[str] | None = None  # a release other than the authored one: its items (recipes keep only those)

    def check_item(self, name: str, where: str) -> None:
        if name not in self.item_names and name not in self.files["families.json"].generic:
            raise DataFileError(f"{self.data_dir / where}: {name!r} is not a {self.version} item")

    def expand(self, names_or_tags: list[str]) -> tuple[str, ...]:
        """Item names, with ``#tag`` entries replaced by the tag's members (sorted), without repeats."""
        out: list[str] = []
        for entry in names_or_tags:
            out.extend(sorted(self.tags.tags[entry[1:]]) if entry.startswith("#") else [entry])
        return tuple(dict.fromkeys(out))


def _families(src: _Sources) -> dict[str, frozenset[str]]:
    families_file = src.files["families.json"]
    for name in families_file.prefer:
        src.check_item(name, "families.json")
    families: dict[str, frozenset[str]] = {}
    for generic, spec in families_file.generic.items():
        if spec.tag not in src.tags.tags:
            raise DataFileError(
                f"{src.data_dir / 'families.json'}: field 'generic.{generic}.tag': unknown tag {spec.tag!r}"
            )
        families[generic] = src.tags.tags[spec.tag]
    return families


def _crafts(src: _Sources, families: dict[str, frozenset[str]]) -> dict[str, tuple[CraftRecipe, ...]]:
    """minecraft-data's recipes folded, the extra recipes it lacks, then the generic families' own."""
    names, tags = src.recipe_names, src.tags
    crafts: dict[str, list[CraftRecipe]] = {}
    for result_id, raw_list in src.md["recipes"].items():
        result = names[int(result_id)]
        raw_list = [raw for raw in raw_list if raw["result"].get("count", 1) >= 1]  # npm 1.21's map-extending "air"
        crafts[result] = _fold_recipes(result, raw_list, names, tags)
        if src.keep is not None:  # a release other than the authored one: only what it has
            crafts[result] = _kept(crafts[result], src.keep, tags) if result in src.keep else []
    for extra in src.files["extra_recipes.json"].recipes:  # special recipes minecraft-data does not list
        src.check_item(extra.result, "extra_recipes.json")
        ingredients = []
        for name, count in extra.ingredients.items():
            if name.startswith("#") and name[1:] not in tags.tags:
                raise DataFileError(f"{src.data_dir / 'extra_recipes.json'}: {extra.result}: unknown tag {name!r}")
            if not name.startswith("#"):
                src.check_item(name, "extra_recipes.json")
            accepts = tuple(sorted(tags.tags[name[1:]])) if name.startswith("#") else (name,)
            ingredients.append(Ingredient(name, accepts, count))
        side = 2 if extra.grid == "2x2" else 3
        crafts.setdefault(extra.result, []).append(
            CraftRecipe(extra.result, extra.count, tuple(ingredients), side, side)
        )
    for generic, members in families.items():
        crafts[generic] = _generic_recipes(generic, members, crafts, tags)
    return {
        item: tuple(
            CraftRecipe(r.result, r.count, tuple(_with_generics(i, families) for i in r.ingredients), r.width, r.height)
            for r in recipes
        )
        for item, recipes in crafts.items()
        if recipes
    }


def _smelts(src: _Sources, families: dict[str, frozenset[str]]) -> dict[str, tuple[SmeltRecipe, ...]]:
    smelts: dict[str, list[SmeltRecipe]] = defaultdict(list)
    for entry in src.files["smelting.json"].recipes:
        src.check_item(entry.result, "smelting.json")
        label = entry.input[0] if len(entry.input) == 1 else "|".join(entry.input)
        ingredient = _with_generics(Ingredient(label, src.expand(entry.input)), families)
        smelts[entry.result].append(SmeltRecipe(entry.result, ingredient, ticks=entry.cooking_time))
    return {k: tuple(v) for k, v in smelts.items()}


def _fuels(src: _Sources, families: dict[str, frozenset[str]]) -> dict[str, float]:
    fuels_file = src.files["fuels.json"]
    for field_name, keys in (("fuels", fuels_file.fuels), ("exclude", fuels_file.exclude)):
        for key in keys:
            if key.startswith("#") and key[1:] not in src.tags.tags:
                raise DataFileError(f"{src.data_dir / 'fuels.json'}: field '{field_name}.{key}': unknown tag")
            if not key.startswith("#"):
                src.check_item(key, "fuels.json")
    # as in the game's furnace, an excluded item (crimson planks) stays unburnable under any entry (#planks)
    never_burn = set(src.expand(fuels_file.exclude))
    fuels: dict[str, float] = {}
    for key, burn in fuels_file.fuels.items():
        for item in src.expand([key]):
            if item not in never_burn:
                fuels.setdefault(item, burn)
    for generic, members in families.items():
        burns = [fuels[m] for m in members if m in fuels]
        if burns:
            fuels[generic] = min(burns)
    return fuels


def _tools(src: _Sources) -> tuple[dict[str, Tool], dict[int, str]]:
    tools_file = src.files["tools.json"]
    tools: dict[str, Tool] = {}
    for material, tier in tools_file.tiers.items():
        for kind in tools_file.kinds:
            name = f"{material}_{kind}"
            if name in src.item_names:
                tools[name] = Tool(name, kind, tier)
    tier_names: dict[int, str] = {}
    for material, tier in tools_file.tiers.items():
        tier_names.setdefault(tier, material)
    return tools, tier_names


def _sources(src: _Sources, tools: dict[str, Tool]) -> dict[str, Source]:
    """Raw resources (a tool named in resources.json, else the block's harvest tools), mob drops, then what is
    taken from a living mob (gathering, not hunting)."""
    resources_file, mobs_file, names = src.files["resources.json"], src.files["mobs.json"], src.names
    blocks = {b["name"]: b for b in src.md["blocks"]}
    sources: dict[str, Source] = {}
    for entry in resources_file.resources:
        src.check_item(entry.item, "resources.json")
        if entry.block not in blocks:
            raise DataFileError(f"{src.data_dir / 'resources.json'}: {entry.block!r} is not a {src.version} block")
        bad = [layer for layer in entry.layers if not 0 <= layer < len(resources_file.layers)]
        if bad:
            raise DataFileError(
                f"{src.data_dir / 'resources.json'}: {entry.item}: layers {bad} outside "
                f"0..{len(resources_file.layers) - 1}"
            )
        if entry.tool is not None:
            tool = tools.get(entry.tool)
            kind, tier = (tool.kind, tool.tier) if tool else (entry.tool, 0)
        else:
            harvest = blocks[entry.block].get("harvestTools") or {}
            tiers = [tools[names[int(i)]] for i in harvest if names.get(int(i)) in tools]
            kind = tiers[0].kind if tiers else None
            tier = min((t.tier for t in tiers), default=0)
        for used in entry.uses:
            src.check_item(used, "resources.json")
        sources[entry.item] = Source(
            entry.item, "mine", entry.block, frozenset(entry.layers), kind, tier, tuple(sorted(entry.uses.items()))
        )
    for drop in mobs_file.drops:
        src.check_item(drop.item, "mobs.json")
        sources.setdefault(drop.item, Source(drop.item, "kill", drop.mob, frozenset(drop.layers), None, 0))
    mobs = {drop.mob for drop in mobs_file.drops}
    for act in mobs_file.interactions:
        src.check_item(act.item, "mobs.json")
        if act.mob not in mobs:
            raise DataFileError(
                f"{src.data_dir / 'mobs.json'}: interaction {act.item}: unknown mob {act.mob!r} "
                f"(known: {', '.join(sorted(mobs))})"
            )
        for used in act.uses:
            src.check_item(used, "mobs.json")
        sources.setdefault(
            act.item, Source(act.item, "mine", act.mob, frozenset(act.layers), None, 0, tuple(sorted(act.uses.items())))
        )
    return sources


def _names(
    src: _Sources,
) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    """Aliases, name dialects (DEPS' old names), where loot-only items are found, and players' names."""
    aliases_file = src.files["aliases.json"]
    aliases = {}
    for old, new in aliases_file.aliases.items():
        src.check_item(new, "aliases.json")
        aliases[old] = new
    dialects: dict[str, dict[str, str]] = {}
    for dialect, mapping in aliases_file.dialects.items():
        for new in mapping.values():
            src.check_item(new, "aliases.json")
        dialects[dialect] = dict(mapping)
    loot = {}
    for item, where in src.files["loot.json"].loot.items():
        src.check_item(item, "loot.json")
        loot[item] = where
    players = {}
    for phrase, named in aliases_file.players.items():
        if named.item in src.item_names or named.item in src.files["families.json"].generic:  # a release may lack it
            players[" ".join(phrase.lower().split())] = named.item
    return aliases, dialects, loot, players


def _kept(recipes: list[CraftRecipe], items: set[str], tags: _TagIndex) -> list[CraftRecipe]:
    """Another release's recipes (the flattening's, for 1.12.2) where this one has the result and every slot."""
    kept = []
    for recipe in recipes:
        ingredients = []
        for i in recipe.ingredients:
            accepts = tuple(a for a in i.accepts if a in items)
            if not accepts:
                break
            ingredients.append(
                i if accepts == i.accepts else Ingredient(tags.label(frozenset(accepts)), accepts, i.count)
            )
        else:
            kept.append(CraftRecipe(recipe.result, recipe.count, tuple(ingredients), recipe.width, recipe.height))
    return kept


@dataclass
class _Version:
    """What a release other than the authored one adds to the build (:mod:`.build_versions`, :mod:`.legacy`)."""

    item_ids: dict[str, tuple[str, int]]
    block_ids: dict[str, tuple[str, int]]
    silk_touch: dict[str, str]
    absent: frozenset[str]
    set_name: str
    layer_y: dict[str, int]


def _sources_for(version: str, data_dir: Path, files: dict) -> tuple[_Sources, _Version | None]:
    """minecraft-data and the data files as ``version`` has them; for the authored release, exactly as written."""
    index = files["versions.json"]
    md = _read_minecraft_data(version)
    names = {item["id"]: item["name"] for item in md["items"]}
    if version == index.authored:
        tags = _TagIndex(files["tags.json"].tags, files["tags.json"].recipe_tags)
        return _Sources(version, data_dir, md, files, names, set(names.values()), tags, names), None
    chosen = data_set(version, data_dir)
    tags_file = load_data_file(chosen.folder / "tags.json", TagsFile)
    smelting_file = load_data_file(chosen.folder / "smelting.json", SmeltingFile)
    item_ids: dict[str, tuple[str, int]] = {}
    block_ids: dict[str, tuple[str, int]] = {}
    recipe_names = names
    if pre_flattening(version):
        folder, _ = data_paths(version) or (None, None)
        assert folder is not None
        flat = flatten(md["items"], md["blocks"], read_legacy(folder))
        recipe_md = _read_minecraft_data(chosen.recipes_from, ("items", "recipes"))
        md = {**md, "items": flat.items, "blocks": flat.blocks, "recipes": recipe_md["recipes"]}
        names, item_ids, block_ids = flat.names, flat.item_ids, flat.block_ids
        recipe_names = {item["id"]: item["name"] for item in recipe_md["items"]}
        item_names = set(item_ids)
    else:
        item_names = set(names.values())
    tags_file = fit_tags(tags_file, item_names)
    mobs = {e["name"] for e in _read_minecraft_data(version, ("entities",))["entities"]}
    generic = set(files["families.json"].generic)
    fit = Fit(item_names, generic, tags_file.tags, {b["name"] for b in md["blocks"]}, mobs)
    files = {**files, "tags.json": tags_file, "smelting.json": fit_smelting(smelting_file, fit)}
    files, silk, layer_y = fit_files(files, version, fit)
    authored = {item["name"] for item in _read_minecraft_data(index.authored, ("items",))["items"]}
    tags = _TagIndex(tags_file.tags, tags_file.recipe_tags)
    src = _Sources(version, data_dir, md, files, names, item_names, tags, recipe_names, item_names)
    return src, _Version(item_ids, block_ids, silk, frozenset(authored - item_names), chosen.name, layer_y)


def _ore_variants(md: dict, mined: set[str]) -> dict[str, tuple[str, ...]]:
    """Blocks that drop what a mined block drops: its deepslate form (1.17 on: deepslate_iron_ore)."""
    blocks = {b["name"] for b in md["blocks"]}
    return {block: (f"deepslate_{block}",) for block in sorted(mined) if f"deepslate_{block}" in blocks}


def build_knowledge_base(version: str, data_dir: Path) -> KnowledgeBase:
    files = load_data_dir(data_dir)
    src, other = _sources_for(version, data_dir, files)
    md, files, names = src.md, src.files, src.names
    families = _families(src)
    crafts = _crafts(src, families)
    smelts = _smelts(src, families)
    fuels = _fuels(src, families)
    tools, tier_names = _tools(src)
    sources = _sources(src, tools)
    aliases, dialects, loot, players = _names(src)
    if other is not None:
        loot = {**other.silk_touch, **loot}
    resources_file, world_spec = files["resources.json"], files["world.json"]
    wanted = {entry.block for entry in resources_file.resources}
    wanted |= {world_spec.dig_down.soil_block, world_spec.dig_down.rock_block}
    mined_blocks, dig_speeds, durability = _mining_facts(md, names, wanted)
    world = _world_model(world_spec, data_dir / "world.json", mined_blocks, resources_file, files["mobs.json"])
    families_file, rules_file = files["families.json"], files["rules.json"]
    return KnowledgeBase(
        version=version,
        items=frozenset(src.item_names | set(families)),
        generic={g: spec.default for g, spec in families_file.generic.items()},
        families=families,
        crafts=crafts,
        smelts=smelts,
        fuels=fuels,
        fuel_preference=tuple(files["fuels.json"].preference),
        sources=sources,
        tools=tools,
        tier_names=tier_names,
        dig_down_kind=files["tools.json"].dig_down_kind,
        layers=tuple(resources_file.layers),
        aliases=aliases,
        player_names=players,
        dialects=dialects,
        prefer=tuple(families_file.prefer),
        profiles={
            name: RuleProfile(
                name,
                p.gather,
                p.table_at_hand,
                p.furnace_needed,
                p.fuel_needed,
                p.generic_names,
                p.climb,
                p.about,
                p.durability,
            )
            for name, p in rules_file.profiles.items()
        },
        default_profile=rules_file.default,
        loot=loot,
        blocks=mined_blocks,
        dig_speeds=dig_speeds,
        durability=durability,
        world=world,
        **(_version_fields(other, md, {entry.block for entry in resources_file.resources}) if other else {}),
    )


def _version_fields(other: _Version, md: dict, mined: set[str]) -> dict[str, Any]:
    """The knowledge base's fields a release other than the authored one fills (empty for 1.16.5)."""
    return {
        "item_ids": other.item_ids,
        "block_ids": other.block_ids,
        "absent": other.absent,
        "ore_variants": _ore_variants(md, mined),
        "data_set": other.set_name,
        "layer_y": other.layer_y,
    }
