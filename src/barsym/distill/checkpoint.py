"""A training checkpoint read without running anything in it (``barsym distill --resume/--warm-start``).

Why: ``torch.save`` writes a zip whose ``data.pkl`` is a pickle, and a pickle can name any Python
function to call while it is read (``os.system``, ``builtins.eval``). A checkpoint is a file from
disk -- another run's, a shared folder's, a download -- so barsym never reads one with Python's
full unpickler. Two readers, both refusing anything but plain data and tensors:

- :func:`inspect` needs no torch and loads no model: the zip, then ``data.pkl`` through an
  unpickler that knows only tensors, their storages and ``OrderedDict`` (any other name is refused,
  and named), then what a checkpoint must hold (adapters as tensors whose bytes are in the file,
  the optimizer's and schedule's states, the counters, the settings it was made with). The command
  calls it before anything is loaded, so a planted or damaged file is one line at once, not a
  traceback after the model's ~20 s load.
- :func:`load` is what training uses: ``torch.load(weights_only=True)`` (torch's own restricted
  unpickler) on a file :func:`inspect` passed, the adapters then checked to be finite numbers.

Checkpoints written by earlier barsym releases are the same format and read unchanged.
"""

from __future__ import annotations

import collections
import io
import math
import os
import pickle
import random
import zipfile
from dataclasses import dataclass
from typing import Any

__all__ = ["CheckpointError", "inspect", "load"]

#: a checkpoint of rank-1024 adapters on every block with its optimizer state is ~2 GB; its pickle is small
MAX_PICKLE_BYTES = 64 * 2**20
#: the tensor rebuilders ``torch.save`` names (the storage types are ``torch.<Kind>Storage``)
_REBUILDERS = {
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_tensor"),
    ("torch._utils", "_rebuild_parameter"),
}
_ITEM_BYTES = {
    "DoubleStorage": 8,
    "FloatStorage": 4,
    "HalfStorage": 2,
    "BFloat16Storage": 2,
    "LongStorage": 8,
    "IntStorage": 4,
    "ShortStorage": 2,
    "CharStorage": 1,
    "ByteStorage": 1,
    "BoolStorage": 1,
}
#: what every checkpoint holds, and a resumable one besides (``barsym.distill.train.train``'s ``state``)
_ADAPTERS_ONLY = ("adapters", "config")
_RESUMABLE = ("optimizer", "schedule", "rng", "order", "losses", "tokens", "step", "train_seconds", "data")


class CheckpointError(ValueError):
    """The file is not a checkpoint barsym can use; the message says why, in a few words."""


@dataclass(frozen=True)
class _Storage:
    key: str
    kind: str
    numel: int


@dataclass(frozen=True)
class _Tensor:
    """A tensor as the pickle describes it (no data is read): enough to check that its bytes are there."""

    storage: _Storage
    offset: int
    size: tuple[int, ...]


class _StorageType:
    def __init__(self, name: str):
        self.name = name


def _rebuild(storage=None, offset=0, size=(), stride=(), *rest):
    if isinstance(storage, _Tensor):  # _rebuild_parameter(tensor, requires_grad, hooks)
        return storage
    if not isinstance(storage, _Storage) or not isinstance(offset, int) or not _ints(size) or not _ints(stride):
        raise CheckpointError("a tensor in it is not described the way torch.save describes one")
    if any(n < 0 for n in (offset, *size, *stride)):
        raise CheckpointError("a tensor in it has a negative size")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if len(size) != len(stride) or last >= storage.numel:
        raise CheckpointError("a tensor in it reaches past its data")
    return _Tensor(storage, offset, tuple(size))


def _ints(values: Any) -> bool:
    return isinstance(values, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)


class _Reader(pickle.Unpickler):
    """Python's unpickler that can build nothing but plain data, tensors and ``OrderedDict``."""

    def __init__(self, data: bytes, storages: dict[str, _Storage]):
        super().__init__(io.BytesIO(data))
        self.storages = storages

    def find_class(self, module: str, name: str):
        if (module, name) in _REBUILDERS:
            return _rebuild
        if module == "torch" and name in _ITEM_BYTES:
            return _StorageType(name)
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        where = f"{module}.{name}"[:80]
        raise CheckpointError(f"it names {where}, which a checkpoint never holds (a planted file?); nothing was run")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise CheckpointError("it refers to data in a way torch.save does not")
        _, kind, key, _location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
            raise CheckpointError("it refers to data in a way torch.save does not")
        if key not in self.storages:
            self.storages[key] = _Storage(key, kind.name, numel)
        return self.storages[key]


def _read(path: str) -> tuple[dict, dict[str, _Storage], dict[str, int]]:
    """The checkpoint's pickled dict (tensors as :class:`_Tensor`), its storages, and its data members' sizes."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(pickles) != 1:
                raise CheckpointError("it is a zip file, but not one torch.save wrote (no single data.pkl)")
            info = archive.getinfo(pickles[0])
            if info.file_size > MAX_PICKLE_BYTES:
                raise CheckpointError(f"its data.pkl has {info.file_size} bytes; a checkpoint's has a few thousand")
            data = archive.read(info)
            folder = pickles[0].split("/")[0] + "/data/"
            sizes = {n[len(folder) :]: archive.getinfo(n).file_size for n in names if n.startswith(folder)}
    except zipfile.BadZipFile:
        raise CheckpointError(
            "not a checkpoint (not the zip file torch.save writes; cut short or another format)"
        ) from None
    except (zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError) as exc:
        raise CheckpointError(f"its zip file is damaged ({' '.join(str(exc).split())[:100]})") from None
    except OSError as exc:
        raise CheckpointError(f"cannot read it ({exc.strerror or exc})") from None
    storages: dict[str, _Storage] = {}
    try:
        saved = _Reader(data, storages).load()
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError("its data.pkl is nested too deeply to be a checkpoint") from None
    except Exception as exc:  # noqa: BLE001 -- any way a damaged pickle fails to read is the same answer
        raise CheckpointError(f"its data.pkl is damaged ({type(exc).__name__})") from None
    if not isinstance(saved, dict):
        raise CheckpointError(f"it holds a {type(saved).__name__}, not the dict barsym distill writes")
    return saved, storages, sizes


def inspect(path: str | os.PathLike, resume: bool) -> dict:
    """What the checkpoint says of itself (``config``, ``step``, ``train_seconds``, ``runs``, ``data``), once it
    reads as one: :class:`CheckpointError` for a file that is planted, damaged or not a checkpoint.
    ``resume``: it must hold what going on needs (optimizer, schedule, data order), not only adapters."""
    saved, storages, sizes = _read(os.fspath(path))
    for key, storage in storages.items():
        need = storage.numel * _ITEM_BYTES[storage.kind]
        if sizes.get(key, -1) < need:
            raise CheckpointError(
                f"the data of one of its tensors is missing or cut short ({sizes.get(key, 0)} of {need} bytes)"
            )
    wanted = _ADAPTERS_ONLY + (_RESUMABLE if resume else ())
    missing = [k for k in wanted if k not in saved]
    if missing:
        raise CheckpointError(f"it has no {', '.join(missing)}; it is not a checkpoint barsym distill wrote")
    adapters = saved["adapters"]
    if not isinstance(adapters, dict) or not adapters:
        raise CheckpointError("its adapters are not a non-empty table of tensors")
    for name, tensor in adapters.items():
        if not isinstance(name, str) or "lora_" not in name or not isinstance(tensor, _Tensor):
            raise CheckpointError(f"its adapters hold {str(name)[:80]!r}, which is not a LoRA tensor")
    if not isinstance(saved["config"], dict):
        raise CheckpointError("its settings ('config') are not a table")
    problem = _counters_problem(saved, resume)
    if problem:
        raise CheckpointError(problem)
    return {k: saved.get(k) for k in ("config", "step", "train_seconds", "runs", "data")}


def _counters_problem(saved: dict, resume: bool) -> str:
    """Why the counters cannot be gone on from ('' when they can): each has the type training gives it."""
    count = (int,)
    checks = {
        "step": lambda v: isinstance(v, count) and v >= 0,
        "runs": lambda v: isinstance(v, count) and v >= 1,
        "train_seconds": lambda v: isinstance(v, (int, float)) and math.isfinite(v) and v >= 0,
        "data": lambda v: v is None or isinstance(v, str),
    }
    if resume:
        checks.update(
            tokens=lambda v: isinstance(v, count) and v >= 0,
            order=lambda v: isinstance(v, list) and all(isinstance(i, int) and i >= 0 for i in v),
            losses=lambda v: isinstance(v, list) and all(isinstance(x, (int, float)) for x in v),
            optimizer=lambda v: isinstance(v, dict) and isinstance(v.get("param_groups"), list),
            schedule=lambda v: isinstance(v, dict),
            rng=_is_rng_state,
            warm_start=lambda v: v is None or isinstance(v, dict),
        )
    for key, ok in checks.items():
        if key in saved and (isinstance(saved[key], bool) or not ok(saved[key])):
            return f"its {key!r} is not what training writes there"
    return ""


def _is_rng_state(value) -> bool:
    try:
        random.Random().setstate(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def load(path: str | os.PathLike, resume: bool) -> dict:
    """The checkpoint as training uses it (torch tensors), read with ``torch.load(weights_only=True)`` after
    :func:`inspect`; :class:`CheckpointError` when it fails either, or holds adapters that are not finite."""
    import torch

    inspect(path, resume)
    try:
        saved = torch.load(os.fspath(path), weights_only=True, map_location="cpu")
    except (pickle.UnpicklingError, RuntimeError, ValueError, OSError, EOFError) as exc:
        raise CheckpointError(f"torch refuses it ({' '.join(str(exc).split())[:160]})") from None
    for name, tensor in saved["adapters"].items():
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"its adapter {name[:80]} holds numbers that are not finite (NaN or infinity)")
    return saved
