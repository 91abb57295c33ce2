"""Knowledge base: load (and cache) what barsym knows about the game.

``load_kb()`` is the one entry point. Building from minecraft-data's JSON takes
a few hundred milliseconds; the result is pickled under the user's cache
folder, keyed by the game version, barsym's version and source, the installed
minecraft-data version and a hash of every data file, so any change rebuilds
and a warm start costs a few milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from .actions import DIG_DOWN_TIER, Action, Slot, ToolNeed
from .errors import DataFileError, VersionNotSupportedError
from .knowledge import CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool, UnknownItemError
from .rules import CRAFTING_TABLE, EPSILON, FURNACE, RecipeFit, Rules, UnknownProfileError, batches, rules_for

DEFAULT_VERSION = "1.16.5"
#: Game versions barsym has authored data for (data/recipes: tags and smelting from ArticData 1.16.5,
#: resources, fuels, mobs and families written against 1.16). minecraft-data knows many more versions,
#: but planning 1.18's ore layers with 1.16's would be quietly wrong, so the others are refused.
SUPPORTED_VERSIONS = ("1.16.5",)

__all__ = [
    "DIG_DOWN_TIER", "EPSILON", "Action", "Slot", "ToolNeed",
    "CRAFTING_TABLE", "FURNACE", "RecipeFit", "RuleProfile", "Rules", "UnknownProfileError", "batches", "rules_for",
    "DEFAULT_VERSION", "SUPPORTED_VERSIONS", "CraftRecipe", "DataFileError", "Ingredient", "KnowledgeBase",
    "SmeltRecipe", "Source", "Tool", "UnknownItemError", "VersionNotSupportedError", "default_data_dir", "load_kb",
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


def _fingerprint(version: str, data_dir: Path) -> str:
    digest = hashlib.sha256(version.encode())
    for dist in ("barsym", "minecraft-data"):
        try:
            digest.update(metadata.version(dist).encode())
        except metadata.PackageNotFoundError:
            digest.update(b"-")
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    for data_file in sorted(data_dir.glob("*.json")):
        digest.update(data_file.name.encode())
        digest.update(data_file.read_bytes())
    return digest.hexdigest()[:20]


def build_knowledge_base(version: str, data_dir: Path) -> KnowledgeBase:
    """Build from scratch; imported lazily so a warm start skips pydantic and minecraft-data."""
    from .build import build_knowledge_base as build

    return build(version, data_dir)


def _load_uncached(version: str, data_dir: Path, use_cache: bool) -> KnowledgeBase:
    if not use_cache:
        return build_knowledge_base(version, data_dir)
    path = cache_dir() / f"kb-{version}-{_fingerprint(version, data_dir)}.pickle"
    try:
        with path.open("rb") as handle:
            kb = pickle.load(handle)
        if isinstance(kb, KnowledgeBase):
            return kb
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        pass  # missing or stale cache: rebuild below
    kb = build_knowledge_base(version, data_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False) as tmp:
            pickle.dump(kb, tmp, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp.name, path)
    except OSError:
        pass  # a read-only home must not stop planning; we just stay cold
    return kb


@lru_cache(maxsize=4)
def _load(version: str, data_dir: str, use_cache: bool) -> KnowledgeBase:
    return _load_uncached(version, Path(data_dir), use_cache)


def load_kb(version: str = DEFAULT_VERSION, data_dir: Path | None = None, use_cache: bool = True) -> KnowledgeBase:
    """The knowledge base for ``version``, memoised per process and cached on disk.

    With barsym's own data (``data_dir`` None) only :data:`SUPPORTED_VERSIONS`
    load; a caller passing its own ``data_dir`` vouches that it fits ``version``.
    """
    own = data_dir is None or Path(data_dir).resolve() == default_data_dir().resolve()
    if own and version not in SUPPORTED_VERSIONS:
        raise VersionNotSupportedError(
            f"barsym has no data for Minecraft {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)} "
            f"(its tags and smelting recipes come from ArticData 1.16.5)")
    return _load(version, str(data_dir or default_data_dir()), use_cache)
