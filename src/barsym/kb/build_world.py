"""The execution worlds' facts: blocks and tools from minecraft-data, and ``world.json`` checked against the rest."""

from __future__ import annotations

from pathlib import Path

from .errors import DataFileError
from .knowledge import Block
from .schema import WorldFile, WorldResource
from .world_params import LayerModel, MobModel, ResourceModel, WorldModel


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
    dig_speeds = {
        material: {names[int(i)]: float(speed) for i, speed in speeds.items() if int(i) in names}
        for material, speeds in md["materials"].items()
    }
    durability = {item["name"]: int(item["maxDurability"]) for item in md["items"] if item.get("maxDurability")}
    return blocks, dig_speeds, durability


def _resource_model(entry: WorldResource) -> ResourceModel:
    return ResourceModel(entry.density, entry.cluster, entry.drops, entry.chance)


def _world_model(spec: WorldFile, path: Path, blocks: dict[str, Block], resources, mobs) -> WorldModel:
    """world.json as a :class:`WorldModel`, checked against the other files (every mob and layer is covered)."""
    if len(spec.layers) != len(resources.layers):
        raise DataFileError(
            f"{path}: field 'layers': {len(spec.layers)} layers, but resources.json has "
            f"{len(resources.layers)} ({', '.join(resources.layers)})"
        )
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
            raise DataFileError(
                f"{path}: field 'resources.{item}': not a resource of resources.json or an interaction of mobs.json"
            )
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
        controller={
            "mine": spec.controller.mine,
            "craft": spec.controller.craft,
            "smelt": spec.controller.smelt,
            "kill": spec.controller.kill,
            "dig_down": spec.controller.dig_down,
            "climb_up": spec.controller.climb_up,
        },
        resources={item: _resource_model(entry) for item, entry in spec.resources.items()},
        default_surface=_resource_model(spec.default_surface),
        default_underground=_resource_model(spec.default_underground),
        mobs={name: MobModel(m.health, m.encounter_ticks, m.escape, dict(m.drops)) for name, m in spec.mobs.items()},
    )
