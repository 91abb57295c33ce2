"""Derive barsym's smelting recipes and item tags from an ArticData export (1.16.5, 1.17.1, ...).

minecraft-data has no smelting recipes and no item tags, so barsym keeps them
as JSON: 1.16.5's under ``data/recipes/``, every other release's under
``data/recipes/versions/VERSION/`` (``data/recipes/versions.json`` says which
versions use which). This script regenerates those two files from an ArticData
export (Articdive/ArticData, MIT licence): 1.16.5's from commit 3ed14e9, which
the project's shared folder carries as ``articdata-1.16.5/``; the later ones
from the repository's release branches (``1.17.1``, ``1.18.2``, ``1.19.2``,
``1.20.4``), whose ``1_19_2_recipes.json`` and ``1_19_2_tags/1_19_2_item_tags.json``
are the same two files under other names (``--prefix 1_19_2_`` finds them).
barsym itself never reads an export: run this script only when refreshing the data.

    python tools/gen_articdata.py ../shared/datasets/articdata-1.16.5 data/recipes
    python tools/gen_articdata.py ARTICDATA-1.19.2 data/recipes/versions/1.19.2 --prefix 1_19_2_ \
        --source "Articdive/ArticData 1.19.2 (MIT licence, branch 1.19.2, commit 63cb64d)"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SOURCE = "Articdive/ArticData 1.16.5 (MIT licence, commit 3ed14e9)"


def _strip(name: str) -> str:
    return name.split(":", 1)[1] if ":" in name else name


def expand_tags(raw: dict) -> dict[str, list[str]]:
    """Resolve nested ``#tag`` references so every tag lists plain item names."""
    resolved: dict[str, list[str]] = {}

    def visit(tag: str, trail: tuple[str, ...]) -> list[str]:
        if tag in resolved:
            return resolved[tag]
        if tag in trail:
            raise ValueError(f"tag cycle: {' -> '.join(trail + (tag,))}")
        members: list[str] = []
        for value in raw["minecraft:" + tag]["values"]:
            if value.startswith("#"):
                members.extend(visit(_strip(value[1:]), trail + (tag,)))
            else:
                members.append(_strip(value))
        unique = list(dict.fromkeys(members))
        resolved[tag] = unique
        return unique

    for key in raw:
        visit(_strip(key), ())
    return dict(sorted(resolved.items()))


def crafting_tags(raw: dict) -> list[str]:
    """Tags that crafting recipes name: the ones a recipe variant may be folded into."""
    used: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            if "tag" in node:
                used.add(_strip(node["tag"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for recipe in raw.values():
        if recipe["type"].startswith("minecraft:crafting"):
            walk(recipe)
    return sorted(used)


def smelting_recipes(raw: dict) -> list[dict]:
    """Furnace recipes only: blasting, smoking and campfire are other stations."""
    out = []
    for key, recipe in sorted(raw.items()):
        if recipe["type"] != "minecraft:smelting":
            continue
        ingredient = recipe["ingredient"]
        choices = ingredient if isinstance(ingredient, list) else [ingredient]
        names: list[str] = []
        for choice in choices:
            if "tag" in choice:
                names.append("#" + _strip(choice["tag"]))
            else:
                names.append(_strip(choice["item"]))
        out.append(
            {
                "id": _strip(key),
                "result": _strip(recipe["result"] if isinstance(recipe["result"], str) else recipe["result"]["item"]),
                "input": names,
                "cooking_time": recipe.get("cookingtime", 200),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("articdata", type=Path, help="folder with recipes.json and item_tags.json")
    parser.add_argument("out", type=Path, help="barsym's data/recipes folder (or data/recipes/versions/VERSION)")
    parser.add_argument("--source", default=SOURCE, help="where the export came from, written into both files")
    parser.add_argument(
        "--prefix", default="", help="the export's file-name prefix (1_19_2_: 1_19_2_recipes.json, 1_19_2_tags/...)"
    )
    args = parser.parse_args(argv)
    recipes = json.loads((args.articdata / f"{args.prefix}recipes.json").read_text())
    tag_file = args.articdata / f"{args.prefix}tags" / f"{args.prefix}item_tags.json"
    tags = json.loads((tag_file if args.prefix else args.articdata / "item_tags.json").read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tags.json").write_text(
        json.dumps({"source": args.source, "recipe_tags": crafting_tags(recipes), "tags": expand_tags(tags)}, indent=1)
        + "\n"
    )
    (args.out / "smelting.json").write_text(
        json.dumps({"source": args.source, "recipes": smelting_recipes(recipes)}, indent=1) + "\n"
    )
    print(f"wrote {args.out / 'tags.json'} and {args.out / 'smelting.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
