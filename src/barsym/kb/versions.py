"""Which Minecraft Java versions barsym plans for, and which data each one is built from.

Why a module of its own: a version is chosen on every command line
(``--mc-version``) and in every API call, long before a knowledge base is
built, and naming what is installed must stay as light as the warm start (json
and paths only: no pydantic, no minecraft-data import).

A version can be planned for when minecraft-data has its items, blocks,
crafting recipes and tool materials. minecraft-data comes from two places:
the PyPI package ``minecraft-data`` (installed with barsym; 1.8 to 1.19.2), and,
for newer releases, the npm package of the same name, whose ``data`` folder
``$BARSYM_MINECRAFT_DATA`` may name (``node_modules/minecraft-data/minecraft-data/data``;
1.20 to 1.21 and later). The PyPI copy serves every version it has.

minecraft-data has no item tags and no smelting recipes: those come from
ArticData exports, one per data set of ``data/recipes/versions.json`` (1.16.5
in ``data/recipes/``, 1.17.1, 1.18.2, 1.19.2 and 1.20.4 under
``data/recipes/versions/``). A version uses the newest set that is not newer
than it (1.18 and 1.18.1 use 1.18.2's; 1.8 to 1.16.4 use 1.16.5's, with the
items the version lacks left out): :func:`data_set`. Only 1.16.5, the version
the hand-written files are written against, checks every name in them strictly.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .knowledge import DEFAULT_VERSION

#: the release that renamed every item (``log`` with metadata 0 became ``oak_log``)
FLATTENING = (1, 13)
#: the environment variable naming another minecraft-data ``data`` folder (the npm package's)
MINECRAFT_DATA_ENV = "BARSYM_MINECRAFT_DATA"
#: what a knowledge base is built from; a version whose minecraft-data lacks one cannot be planned for
NEEDED = ("items", "blocks", "recipes", "materials")
#: the oldest release barsym plans for (the oldest whose data set, 1.16.5's fitted, it was checked on)
OLDEST = (1, 8, 0)
_RELEASE = re.compile(r"^1\.(\d{1,2})(?:\.(\d{1,2}))?$")


def release(version: str) -> tuple[int, int, int] | None:
    """``1.19.2`` as (1, 19, 2), ``1.20`` as (1, 20, 0); None for a snapshot (``21w07a``) or anything else."""
    match = _RELEASE.match(version)
    if match is None:
        return None
    return (1, int(match.group(1)), int(match.group(2) or 0))


def pre_flattening(version: str) -> bool:
    """Whether ``version`` names its items the old way (``planks`` with metadata 1 for spruce planks)."""
    parts = release(version)
    return parts is not None and parts[:2] < FLATTENING


def pypi_data_dir() -> Path | None:
    """The PyPI minecraft-data package's ``data/data`` folder, found without importing the package."""
    spec = importlib.util.find_spec("minecraft_data")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data" / "data"
    return folder if (folder / "dataPaths.json").is_file() else None


def extra_data_dir() -> Path | None:
    """``$BARSYM_MINECRAFT_DATA``, when it names a minecraft-data ``data`` folder."""
    configured = os.environ.get(MINECRAFT_DATA_ENV)
    if not configured:
        return None
    folder = Path(configured)
    return folder if (folder / "dataPaths.json").is_file() else None


@lru_cache(maxsize=4)
def _releases_in(folder: Path) -> dict[str, dict[str, str]]:
    paths = json.loads((folder / "dataPaths.json").read_text(encoding="utf-8"))["pc"]
    return {
        version: parts
        for version, parts in paths.items()
        if (release(version) or (0, 0, 0)) >= OLDEST and all(part in parts for part in NEEDED)
    }


def installed() -> dict[str, Path]:
    """Every release whose minecraft-data is installed, oldest first, with the ``data`` folder serving it."""
    found: dict[str, Path] = {}
    for folder in (pypi_data_dir(), extra_data_dir()):
        if folder is None:
            continue
        for version in _releases_in(folder):
            found.setdefault(version, folder)
    return dict(sorted(found.items(), key=lambda kv: release(kv[0]) or (0, 0, 0)))


def data_paths(version: str) -> tuple[Path, dict[str, str]] | None:
    """The minecraft-data folder serving ``version`` and its ``dataPaths.json`` entry (None: not installed)."""
    folder = installed().get(version)
    if folder is None:
        return None
    return folder, _releases_in(folder)[version]


@dataclass(frozen=True)
class DataSet:
    """What a version's knowledge base is built from, beside the hand-written files of ``data/recipes``."""

    version: str  # the game version asked for
    name: str  # the data set: the ArticData release its tags and smelting recipes come from
    folder: Path  # where its tags.json and smelting.json are
    source: str  # where the set came from, for ``barsym versions``
    strict: bool  # every name of the hand-written files must be an item (the version they are written for)
    recipes_from: str  # whose crafting recipes: the version's own, or the flattening's for older versions

    @property
    def derived(self) -> bool:
        """The set was made for another version: its tags and recipes are kept where the items exist."""
        return self.name != self.version


class UnknownDataSet(ValueError):
    """versions.json names no data set for the version (older than every set's ``first``)."""


def read_index(data_dir: Path) -> dict:
    """``data/recipes/versions.json`` as plain data (:mod:`.schema` checks it when a knowledge base is built)."""
    return json.loads((data_dir / "versions.json").read_text(encoding="utf-8"))


def data_set(version: str, data_dir: Path) -> DataSet:
    """The data set ``version`` is built from: the newest whose ``first`` release is not newer than it."""
    index = read_index(data_dir)
    wanted = release(version)
    if wanted is None:
        raise UnknownDataSet(f"{version!r} is not a Minecraft Java release (such as 1.16.5)")
    chosen = None
    for name, entry in index["sets"].items():
        first = release(entry["first"])
        if (
            first is not None
            and first <= wanted
            and (chosen is None or first > release(index["sets"][chosen]["first"]))
        ):
            chosen = name
    if chosen is None:
        oldest = min((e["first"] for e in index["sets"].values()), key=lambda v: release(v) or (0, 0, 0))
        raise UnknownDataSet(f"barsym's data starts at Minecraft {oldest}")
    entry = index["sets"][chosen]
    return DataSet(
        version=version,
        name=chosen,
        folder=(data_dir / entry["folder"]).resolve(),
        source=entry["source"],
        strict=version == index["authored"],
        recipes_from=index["pre_flattening_recipes"] if pre_flattening(version) else version,
    )


def version_files(version: str, data_dir: Path) -> list[Path]:
    """The files a version's knowledge base reads beyond ``data_dir/*.json`` (for the cache's fingerprint)."""
    if version == DEFAULT_VERSION:
        return []  # 1.16.5 reads only data/recipes/*.json: its warm start opens no other version's file
    try:
        folder = data_set(version, data_dir).folder
    except (UnknownDataSet, OSError, ValueError, KeyError):
        return []
    return sorted(folder.glob("*.json")) if folder != data_dir.resolve() else []
