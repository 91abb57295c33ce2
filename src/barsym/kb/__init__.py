"""Knowledge base: load (and cache) what barsym knows about the game.

``load_kb()`` is the one entry point. Building from minecraft-data's JSON takes
a few hundred milliseconds; the result is kept as JSON under the user's cache
folder (:mod:`.cache`: never pickle, which would run code from the file),
keyed and checked by the game version, barsym's version and source, the
installed minecraft-data version and a hash of every data file, so any change
rebuilds and a warm start costs tens of milliseconds.
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path

from ..private_files import private_dir, untrusted
from . import cache as kb_cache
from . import knowledge as _knowledge
from .actions import DIG_DOWN_TIER, Action, Slot, ToolNeed
from .errors import DataFileError, VersionNotSupportedError
from .knowledge import CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool, UnknownItemError
from .rules import CRAFTING_TABLE, EPSILON, FURNACE, RecipeFit, Rules, UnknownProfileError, batches, rules_for

DEFAULT_VERSION = _knowledge.DEFAULT_VERSION


def supported_versions() -> tuple[str, ...]:
    """Every Minecraft Java release barsym can plan for here: each one whose minecraft-data is installed
    (:mod:`.versions`: 1.8 to 1.19.2 from PyPI, newer ones from the npm package's folder if named)."""
    from .versions import installed

    return tuple(installed())


__all__ = [
    "DIG_DOWN_TIER",
    "EPSILON",
    "Action",
    "Slot",
    "ToolNeed",
    "CRAFTING_TABLE",
    "FURNACE",
    "RecipeFit",
    "RuleProfile",
    "Rules",
    "UnknownProfileError",
    "batches",
    "rules_for",
    "DEFAULT_VERSION",
    "supported_versions",
    "CraftRecipe",
    "DataFileError",
    "Ingredient",
    "KnowledgeBase",
    "SmeltRecipe",
    "Source",
    "Tool",
    "UnknownItemError",
    "VersionNotSupportedError",
    "default_data_dir",
    "load_kb",
]


def default_data_dir() -> Path:
    """``barsym/data/recipes`` in a wheel; the repository's ``data/recipes`` in a checkout."""
    packaged = Path(__file__).resolve().parent.parent / "data" / "recipes"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "data" / "recipes"


def cache_dir() -> Path:
    configured = os.environ.get("BARSYM_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "barsym"


def build_knowledge_base(version: str, data_dir: Path) -> KnowledgeBase:
    """Build from scratch; imported lazily so a warm start skips pydantic and minecraft-data."""
    from .build import build_knowledge_base as build

    return build(version, data_dir)


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=4)


def _load_uncached(version: str, data_dir: Path, use_cache: bool) -> KnowledgeBase:
    """From the cache file when it can be trusted and is today's; else built, and cached when the folder is ours.

    A cache folder or file someone else could have written is not read (one
    warning, then built in memory): :mod:`.cache` explains why a checksum
    alone is not enough.
    """
    if not use_cache:
        return build_knowledge_base(version, data_dir)
    stamp = kb_cache.fingerprint(version, data_dir)
    folder = cache_dir()
    path = folder / f"kb-{version}-{stamp[:20]}.json"
    problem = untrusted(folder)
    if problem is None:
        problem = untrusted(path)
        where = path
    else:
        where = folder
    if problem is not None:
        fix = (
            f"chmod go-w {where}"
            if "written by other users" in problem
            else "set BARSYM_CACHE_DIR to a folder of yours"
        )
        _warn(f"not using the knowledge-base cache {where}: it {problem}; building in memory ({fix})")
        return build_knowledge_base(version, data_dir)
    try:
        return kb_cache.read(path, stamp)
    except FileNotFoundError:
        pass
    except OSError as exc:
        _warn(f"cannot read the knowledge-base cache {path} ({exc.strerror or exc}); rebuilding it")
    except kb_cache.CacheMismatch as exc:
        _warn(f"not using the knowledge-base cache {path}: {exc}; rebuilding it")
    kb = build_knowledge_base(version, data_dir)
    try:
        private_dir(folder)
        if untrusted(folder) is None:
            kb_cache.write(path, kb, stamp)
    except OSError:
        pass  # a read-only home must not stop planning; we just stay cold
    return kb


@lru_cache(maxsize=4)
def _load(version: str, data_dir: str, use_cache: bool) -> KnowledgeBase:
    return _load_uncached(version, Path(data_dir), use_cache)


def load_kb(version: str = DEFAULT_VERSION, data_dir: Path | None = None, use_cache: bool = True) -> KnowledgeBase:
    """The knowledge base for ``version``, memoised per process and cached on disk.

    Any release whose minecraft-data is installed loads (:func:`supported_versions`); 1.16.5, the
    default, without looking at the others.
    """
    if version != DEFAULT_VERSION and version not in supported_versions():
        known = supported_versions()
        shown = f"{known[0]} to {known[-1]}" if len(known) > 2 else ", ".join(known)
        raise VersionNotSupportedError(
            f"barsym has no data for Minecraft {version!r}; installed: {shown} (`barsym versions` lists them; "
            f"BARSYM_MINECRAFT_DATA may name the npm minecraft-data package's data folder for newer releases)"
        )
    return _load(version, str(data_dir or default_data_dir()), use_cache)
