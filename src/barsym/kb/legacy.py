"""Versions before the flattening (1.8 to 1.12.2): their items under today's names, and their game ids.

Why: before 1.13 an item was a numeric id and a metadata value (``planks``
with metadata 1 is spruce planks, ``dye`` with 4 is lapis lazuli), and
minecraft-data lists those versions' items by the id's name only. barsym plans
with one name per item, so these versions' items are named as the flattening
named them (minecraft-data's ``common/legacy.json``: ``5:1`` is
``spruce_planks``), which is also what barsym's hand-written data and BAR's
plans call them; :class:`Flattened` keeps each name's game id and metadata
for what a bot is handed (``--format actions``).

Their crafting recipes are the flattening release's (minecraft-data 1.13.2),
kept where the version has the result and the ingredients: minecraft-data's
own pre-1.13 recipe tables enumerate a single metadata variant (every wooden
recipe takes dark oak planks, ``5:5``, and logs make only those) and lack
recipes that take a variant (beds, wooden stairs). docs/rules.md says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _plain(name: str) -> str:
    """``minecraft:oak_log[axis=y]`` -> ``oak_log``."""
    return name.split(":", 1)[-1].split("[", 1)[0]


@dataclass
class Flattened:
    """A pre-flattening version's minecraft-data, renamed.

    ``items`` / ``blocks`` are minecraft-data's records under the new names (one
    per metadata value that has one); ``names`` maps a numeric item id to the
    name of its metadata 0 (how blocks name their harvest tools and materials
    their tools: tools have no variants); ``item_ids`` / ``block_ids`` map
    each new name to the version's own (name, metadata).
    """

    items: list[dict[str, Any]]
    blocks: list[dict[str, Any]]
    names: dict[int, str]
    item_ids: dict[str, tuple[str, int]]
    block_ids: dict[str, tuple[str, int]]


def read_legacy(data_folder: Path) -> dict[str, dict[str, str]]:
    """minecraft-data's ``pc/common/legacy.json``: ``{"items": {"5:1": "minecraft:spruce_planks"}, "blocks": ...}``."""
    return json.loads((data_folder / "pc" / "common" / "legacy.json").read_text(encoding="utf-8"))


def flatten(items: list[dict], blocks: list[dict], legacy: dict[str, dict[str, str]]) -> Flattened:
    """The version's items and blocks under their flattened names (the first id:metadata of a name wins)."""
    by_id = {item["id"]: item for item in items}
    new_items: list[dict[str, Any]] = []
    item_ids: dict[str, tuple[str, int]] = {}
    names: dict[int, str] = {}
    for key, new in legacy["items"].items():
        number, meta = (int(part) for part in key.split(":"))
        item = by_id.get(number)
        name = _plain(new)
        if item is None or name in item_ids or name == "air":
            continue
        item_ids[name] = (item["name"], meta)
        names.setdefault(number, name)
        new_items.append({**item, "name": name})
    blocks_by_id = {block["id"]: block for block in blocks}
    new_blocks: list[dict[str, Any]] = []
    block_ids: dict[str, tuple[str, int]] = {}
    for key, new in legacy["blocks"].items():
        number, meta = (int(part) for part in key.split(":"))
        block = blocks_by_id.get(number)
        name = _plain(new)
        if block is None or name in block_ids:
            continue
        block_ids[name] = (block["name"], meta)
        new_blocks.append({**block, "name": name})
    return Flattened(new_items, new_blocks, names, item_ids, block_ids)
