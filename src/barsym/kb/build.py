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

import minecraft_data

from .build_recipes import _fold_recipes, _fold_symbols, _generic_recipes, _TagIndex, _with_generics
from .build_world import _mining_facts, _world_model
from .errors import DataFileError, VersionNotSupportedError
from .knowledge import CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool
from .schema import DATA_FILES, load_data_file

__all__ = ["build_knowledge_base", "load_data_dir", "_fold_symbols"]

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
    names, tags = src.names, src.tags
    crafts: dict[str, list[CraftRecipe]] = {}
    for result_id, raw_list in src.md["recipes"].items():
        result = names[int(result_id)]
        crafts[result] = _fold_recipes(result, raw_list, names, tags)
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


def _names(src: _Sources) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    """Aliases, name dialects (DEPS' old names) and where loot-only items are found."""
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
    return aliases, dialects, loot


def build_knowledge_base(version: str, data_dir: Path) -> KnowledgeBase:
    md = _read_minecraft_data(version)
    files = load_data_dir(data_dir)
    names = {item["id"]: item["name"] for item in md["items"]}
    src = _Sources(
        version,
        data_dir,
        md,
        files,
        names,
        set(names.values()),
        _TagIndex(files["tags.json"].tags, files["tags.json"].recipe_tags),
    )
    families = _families(src)
    crafts = _crafts(src, families)
    smelts = _smelts(src, families)
    fuels = _fuels(src, families)
    tools, tier_names = _tools(src)
    sources = _sources(src, tools)
    aliases, dialects, loot = _names(src)
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
    )
