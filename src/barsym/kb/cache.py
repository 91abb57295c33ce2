"""The knowledge-base cache on disk: plain JSON, checked against the data it was built from.

Why not pickle (as before): ``pickle.load`` runs whatever the file says, so a
file planted in the cache folder ran any command on ``barsym validate``. JSON
can only ever give back data, and what is read is rebuilt into the
knowledge-base classes field by field, guided by their type annotations (no
class name in the file is ever looked up).

Why checked: a *valid* planted knowledge base (the stick recipe changed) would
change every plan. The file's first line is a header naming the format, the
fingerprint of what it was built from (:func:`fingerprint`: game version,
barsym's and minecraft-data's versions, the source of ``barsym.kb``, every
``data/recipes`` file and, for a release other than 1.16.5, its data set's
files and the minecraft-data folder serving it) and the SHA-256 of the body on the second line. A file
whose header does not match today's fingerprint, or whose body does not match
its checksum, is not used. The folder and the file are used only when no one
but the user can write them (:func:`barsym.private_files.untrusted`): a
checksum alone cannot stop someone who can write the file from writing a
matching one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from ..private_files import write_private
from . import knowledge
from .knowledge import Block, CraftRecipe, Ingredient, KnowledgeBase, RuleProfile, SmeltRecipe, Source, Tool
from .world_params import LayerModel, MobModel, ResourceModel, WorldModel

FORMAT = "barsym-kb"
FORMAT_VERSION = 1
#: a knowledge base is about 1 MB of JSON; a cache file far larger is not one (and is not read whole)
MAX_CACHE_BYTES = 64 * 1024 * 1024

_CLASSES = {
    cls.__name__: cls
    for cls in (
        Block,
        CraftRecipe,
        Ingredient,
        KnowledgeBase,
        RuleProfile,
        SmeltRecipe,
        Source,
        Tool,
        LayerModel,
        MobModel,
        ResourceModel,
        WorldModel,
    )
}


class CacheMismatch(Exception):
    """The file is not a cache of today's data (the message says why, for a warning)."""


def fingerprint(version: str, data_dir: Path) -> str:
    """SHA-256 of everything the knowledge base is built from: any change means a new cache."""
    digest = hashlib.sha256(f"{FORMAT}-{FORMAT_VERSION}\0{version}\0".encode())
    for dist in ("barsym", "minecraft-data"):
        try:
            digest.update(metadata.version(dist).encode())
        except metadata.PackageNotFoundError:
            digest.update(b"-")
        digest.update(b"\0")
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for data_file in sorted(data_dir.glob("*.json")):
        digest.update(data_file.name.encode() + b"\0" + data_file.read_bytes())
    if version != knowledge.DEFAULT_VERSION:  # 1.16.5 reads nothing more: its warm start opens no other version's file
        from .versions import data_paths, version_files

        for data_file in version_files(version, data_dir):
            digest.update(data_file.name.encode() + b"\0" + data_file.read_bytes())
        served = data_paths(version)  # the PyPI minecraft-data, or the npm copy $BARSYM_MINECRAFT_DATA names
        if served is not None:
            digest.update(str(served[0]).encode() + b"\0" + (served[0] / "dataPaths.json").read_bytes())
    return digest.hexdigest()


# ---------------------------------------------------------------- to data


def _plain(value: Any) -> Any:
    """A knowledge-base value as JSON data: a dataclass as the list of its fields, sets sorted."""
    if dataclasses.is_dataclass(value):
        return [_plain(getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, (frozenset, set)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def encode(kb: KnowledgeBase, stamp: str) -> bytes:
    """Header line and body line of the cache file for ``kb`` built from data with fingerprint ``stamp``."""
    body = json.dumps(_plain(kb), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "version": kb.version,
        "fingerprint": stamp,
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }
    return json.dumps(header).encode() + b"\n" + body


# ---------------------------------------------------------------- from data


def _same(value):
    return value


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return value


def _checked(kind: type) -> Callable[[Any], Any]:
    def check(value):
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return check


def _decoder(hint: Any) -> Callable[[Any], Any]:
    """A function turning JSON data back into a value of type ``hint`` (raises on anything else)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is float:
        return _number
    if hint in (str, int, bool):
        return _checked(hint)
    if hint is Any:
        return _same
    if origin in (typing.Union, types.UnionType):
        inner = [_decoder(a) for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"cannot decode {hint}")
        one = inner[0]
        return lambda v: None if v is None else one(v)
    if origin is frozenset:
        item = _decoder(args[0])
        return lambda v: frozenset(item(x) for x in _checked(list)(v))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            return lambda v: tuple(item(x) for x in _checked(list)(v))
        parts = [_decoder(a) for a in args]

        def fixed(v):
            if not isinstance(v, list) or len(v) != len(parts):
                raise TypeError(f"expected {len(parts)} values")
            return tuple(p(x) for p, x in zip(parts, v))

        return fixed
    if origin is dict:
        key_type, value = args
        key = int if key_type is int else _checked(str)
        item = _decoder(value)
        return lambda v: {key(k): item(x) for k, x in _checked(dict)(v).items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_decoder(hint)
    raise TypeError(f"cannot decode {hint}")


_DECODERS: dict[type, Callable[[Any], Any]] = {}


def _dataclass_decoder(cls: type) -> Callable[[Any], Any]:
    if cls in _DECODERS:
        return _DECODERS[cls]
    hints = typing.get_type_hints(cls, localns=_CLASSES)
    fields = [_decoder(hints[f.name]) for f in dataclasses.fields(cls)]

    def decode(v):
        if not isinstance(v, list) or len(v) != len(fields):
            raise TypeError(f"{cls.__name__}: expected {len(fields)} fields")
        return cls(*[f(x) for f, x in zip(fields, v)])

    _DECODERS[cls] = decode
    return decode


def decode(data: bytes, stamp: str) -> KnowledgeBase:
    """The knowledge base in a cache file's bytes, or CacheMismatch saying why it is not today's."""
    header_line, newline, body = data.partition(b"\n")
    try:
        header = json.loads(header_line)
    except ValueError:
        raise CacheMismatch("its header is not JSON (an old pickle cache, or not a cache at all)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CacheMismatch("it is not a barsym knowledge-base cache")
    if header.get("format_version") != FORMAT_VERSION or header.get("fingerprint") != stamp:
        raise CacheMismatch("it was built from other data or by another barsym")
    if not newline or hashlib.sha256(body).hexdigest() != header.get("body_sha256"):
        raise CacheMismatch("its content does not match its checksum (damaged or edited)")
    try:
        kb = _dataclass_decoder(KnowledgeBase)(json.loads(body))
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise CacheMismatch(f"its content is not a knowledge base ({exc})") from None
    return kb


def read(path: Path, stamp: str) -> KnowledgeBase:
    """Load ``path``; OSError if it cannot be read, CacheMismatch if it is not today's cache."""
    with path.open("rb") as handle:
        data = handle.read(MAX_CACHE_BYTES + 1)
    if len(data) > MAX_CACHE_BYTES:
        raise CacheMismatch(f"it is larger than {MAX_CACHE_BYTES // (1024 * 1024)} MB")
    return decode(data, stamp)


def write(path: Path, kb: KnowledgeBase, stamp: str) -> None:
    """Write the cache file 0600, atomically (OSError if the folder cannot be written)."""
    write_private(path, encode(kb, stamp))
