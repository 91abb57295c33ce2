"""barsym's hand-written data fitted to a release other than the one it is written for (see :mod:`.versions`).

Why a separate pass: the data files of ``data/recipes`` are written for 1.16.5
and checked strictly there, name by name (a typo is an error). Another release
lacks some of their items (no honeycomb in 1.12.2, no ``grass`` plant in
1.20.4) and changed where others are found (raw iron since 1.17). Rather than
loosen every check of :mod:`.build`, the files are fitted first: the release's
changes (``versions.json``) are applied, and every entry naming an item, tag or
block the release lacks is left out. The strict build then runs on what is
left, exactly as it does for 1.16.5.
"""

from __future__ import annotations

from typing import Any

from .schema import ResourceEntry, VersionsFile, WorldResource
from .versions import release


class Fit:
    """The names a release has: items (with barsym's generic families), tags, blocks, mobs."""

    def __init__(
        self, items: set[str], generic: set[str], tags: dict[str, list[str]], blocks: set[str], mobs: set[str]
    ):
        self.items = items | generic
        self.tags = {name for name, members in tags.items() if members}
        self.blocks = blocks
        self.mobs = mobs  # the release's entities (no cod before 1.13: fish were caught, not killed)

    def item(self, name: str) -> bool:
        return name in self.items

    def entry(self, name: str) -> bool:
        """An item name or a ``#tag`` with members in this release."""
        return name[1:] in self.tags if name.startswith("#") else name in self.items


def fit_tags(tags_file, items: set[str]):
    """Tags with the members the release lacks left out."""
    kept = {name: [m for m in members if m in items] for name, members in tags_file.tags.items()}
    return tags_file.model_copy(update={"tags": kept})


def fit_smelting(smelting_file, fit: Fit):
    recipes = []
    for entry in smelting_file.recipes:
        inputs = [name for name in entry.input if fit.entry(name)]
        if fit.item(entry.result) and inputs:
            recipes.append(entry.model_copy(update={"input": inputs}))
    return smelting_file.model_copy(update={"recipes": recipes})


def changes_for(version: str, index: VersionsFile):
    """The changes of ``versions.json`` that apply to ``version`` (``since`` not newer than it), oldest first."""
    wanted = release(version)
    return [c for c in index.changes if wanted is not None and (release(c.since) or wanted) <= wanted]


def fit_files(files: dict[str, Any], version: str, fit: Fit) -> tuple[dict[str, Any], dict[str, str], dict[str, int]]:
    """The data files as ``version`` has them, what a Silk Touch pickaxe alone mines (item -> why), and the
    layers' y levels the release moved (for bots: the execution worlds keep world.json's, see docs/rules.md)."""
    out = dict(files)
    index: VersionsFile = files["versions.json"]
    resources_file, world = files["resources.json"], files["world.json"]
    resources: list[ResourceEntry] = list(resources_file.resources)
    world_resources: dict[str, WorldResource] = dict(world.resources)
    silk: dict[str, str] = {}
    layer_y: dict[str, int] = {}
    for change in changes_for(version, index):
        layer_y.update(change.layers_y)
        resources = [r for r in resources if r.item not in change.remove]
        for added in change.resources:
            resources.append(ResourceEntry(**added.model_dump(exclude={"like"})))
            if added.like is not None and added.like in world_resources:
                world_resources[added.item] = world_resources[added.like]
        for item in change.silk_touch:
            silk[item] = (
                f"mined whole with a Silk Touch pickaxe since {change.since} (it drops raw metal), which barsym does not plan"
            )
    resources = [
        r
        for r in resources
        if fit.item(r.item)
        and r.block in fit.blocks
        and all(fit.item(u) for u in r.uses)
        and (r.tool is None or fit.item(r.tool))
    ]
    out["resources.json"] = resources_file.model_copy(update={"resources": resources})

    mobs = files["mobs.json"]
    drops = [d for d in mobs.drops if fit.item(d.item) and d.mob in fit.mobs]
    killed = {d.mob for d in drops}
    interactions = [
        act for act in mobs.interactions if fit.item(act.item) and act.mob in killed and all(map(fit.item, act.uses))
    ]
    out["mobs.json"] = mobs.model_copy(update={"drops": drops, "interactions": interactions})
    found = {r.item for r in resources} | {act.item for act in interactions}
    out["world.json"] = world.model_copy(
        update={"resources": {item: spec for item, spec in world_resources.items() if item in found}}
    )

    families = files["families.json"]
    out["families.json"] = families.model_copy(update={"prefer": [p for p in families.prefer if fit.item(p)]})
    fuels = files["fuels.json"]
    out["fuels.json"] = fuels.model_copy(
        update={
            "fuels": {k: v for k, v in fuels.fuels.items() if fit.entry(k)},
            "exclude": [k for k in fuels.exclude if fit.entry(k)],
            "preference": [k for k in fuels.preference if fit.item(k)],
        }
    )
    aliases = files["aliases.json"]
    out["aliases.json"] = aliases.model_copy(
        update={
            "aliases": {old: new for old, new in aliases.aliases.items() if fit.item(new)},
            "dialects": {
                name: {old: new for old, new in mapping.items() if fit.item(new)}
                for name, mapping in aliases.dialects.items()
            },
        }
    )
    loot = files["loot.json"]
    out["loot.json"] = loot.model_copy(
        update={"loot": {item: where for item, where in loot.loot.items() if fit.item(item)}}
    )
    extra = files["extra_recipes.json"]
    out["extra_recipes.json"] = extra.model_copy(
        update={"recipes": [r for r in extra.recipes if fit.item(r.result) and all(map(fit.entry, r.ingredients))]}
    )
    return out, {item: why for item, why in silk.items() if fit.item(item)}, layer_y
