"""``barsym versions [--format text|json]``: the Minecraft Java releases barsym can plan for here.

Each is usable as ``barsym --mc-version V ...`` (and ``mc_version=`` in the
API). A release is listed when minecraft-data's items, blocks, recipes and
tool materials for it are installed: the PyPI package barsym depends on (1.8
to 1.19.2), or the npm package's data folder that ``$BARSYM_MINECRAFT_DATA``
names (1.20 and later). Each line says where its tags and furnace recipes come
from (an ArticData export; ``fitted`` when the export is another release's and
what the release lacks is left out) and whether its items are pre-1.13 ids
with metadata. docs/rules.md says what differs between releases. Exit 0.
"""

from __future__ import annotations

import argparse
import json
from importlib import metadata

from ..kb import DEFAULT_VERSION, default_data_dir
from ..kb.versions import MINECRAFT_DATA_ENV, data_set, installed, pre_flattening, pypi_data_dir
from .common import add_format

HELP = "list the Minecraft versions barsym can plan for (--mc-version V)"
DESCRIPTION = "The Minecraft Java releases whose game data is installed, and where each one's data comes from."


def add_arguments(p) -> None:
    add_format(p, "text|json", "text: one line per release (default); json: a list of records")


def _records() -> list[dict]:
    pypi = pypi_data_dir()
    try:
        pypi_version = metadata.version("minecraft-data")
    except metadata.PackageNotFoundError:
        pypi_version = "?"
    records = []
    for version, folder in installed().items():
        chosen = data_set(version, default_data_dir())
        records.append(
            {
                "version": version,
                "default": version == DEFAULT_VERSION,
                "minecraft_data": f"PyPI minecraft-data {pypi_version}" if folder == pypi else str(folder),
                "tags_and_smelting": chosen.source,
                "fitted": chosen.derived,
                "ids": "legacy id + metadata" if pre_flattening(version) else "name",
                "crafting_recipes": f"minecraft-data {chosen.recipes_from}",
            }
        )
    return records


def run(args: argparse.Namespace) -> int:
    records = _records()
    if args.format == "json":
        print(json.dumps(records, indent=2))
        return 0
    print(f"Minecraft Java releases barsym can plan for (--mc-version V; default {DEFAULT_VERSION}):")
    for r in records:
        notes = [f"tags and smelting: {r['tags_and_smelting'].split(' (')[0]}{', fitted' if r['fitted'] else ''}"]
        if r["ids"] != "name":
            notes.append(f"pre-1.13 ids + metadata, crafting recipes of {r['crafting_recipes']}")
        if r["minecraft_data"].startswith("PyPI") is False:
            notes.append(f"minecraft-data from {r['minecraft_data']}")
        print(f"  {r['version']:<8}{'*' if r['default'] else ' '} " + "; ".join(notes))
    print(
        f"newer releases (1.20, 1.21): install the npm minecraft-data package and set {MINECRAFT_DATA_ENV} to its "
        "data folder (node_modules/minecraft-data/minecraft-data/data)"
    )
    return 0
