"""``--run FILE.jsonl``: an evaluation that survives being killed.

The file is a header line naming the run (planner, its options, the data
set) followed by one JSON line per finished task, written and flushed to
disk the moment the task finishes. Running the same command again reads the
finished tasks and runs only the others; the report is built from the file,
so a run killed and resumed any number of times reports what an
uninterrupted run reports.

What a kill can leave behind is handled on reading: a last line cut off
mid-write (no newline, or not JSON) is dropped and its task run again;
anything else that is not a record of this run is refused with one line,
never overwritten. A second process writing the same file at once is
refused too (an exclusive ``flock`` for the life of the run).

``FILE.jsonl.gz`` is the same run kept compressed (:mod:`.compressed`): read, resumed and
appended to like the plain file, so the run files the repository keeps can stay small.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from pathlib import Path

from ..bar_io import MAX_INPUT_BYTES, read_input
from ..datasets import bundled
from ..private_files import unwritable
from ..redact import hide_secrets
from .compressed import CompressedRunError, compressed_line, is_compressed, members, wants_compression

RUN_VERSION = 1


def repeat_path(path: Path | None, number: int) -> Path | None:
    """The run file of repeat ``number`` (1 is ``path`` itself)."""
    if path is None or number == 1:
        return path
    if path.suffix == ".gz":  # FILE.jsonl.gz -> FILE.repeat2.jsonl.gz
        inner = Path(path.stem)
        return path.with_name(f"{inner.stem}.repeat{number}{inner.suffix}.gz")
    return path.with_name(f"{path.stem}.repeat{number}{path.suffix}")


class RunFileError(ValueError):
    """The run file cannot be used: not a run file, another run's, damaged, busy or unwritable."""


def read_run(path: Path) -> tuple[dict, list[dict], int]:
    """(header, task records, byte length of the complete lines) of a run file; a cut-off last line is left out."""
    header, numbered, complete = read_run_lines(path)
    return header, [record for _, record in numbered], complete


def read_run_lines(path: Path) -> tuple[dict, list[tuple[int, dict]], int]:
    """As :func:`read_run`, each record with its line number (for messages naming a damaged one)."""
    try:
        data = _text(path, read_input(path))
    except FileNotFoundError:
        raise RunFileError(f"{path}: no such run file") from None
    except IsADirectoryError:
        raise RunFileError(f"{path}: not a regular file; give a run file written by barsym eval --run") from None
    except OSError as exc:
        raise RunFileError(f"{path}: cannot read ({exc.strerror})") from None
    lines = data.split(b"\n")
    complete = data.rfind(b"\n") + 1  # a last piece without newline is a write a kill cut off
    rows = lines[:-1]
    header: dict | None = None
    records: list[tuple[int, dict]] = []
    for number, raw in enumerate(rows, start=1):
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if number == len(rows):  # a damaged last line: dropped like a cut-off one
                complete -= len(raw) + 1
                break
            raise RunFileError(
                f"{path}: line {number} is not a JSON record; not a barsym run file, "
                f"or damaged (use another --run file)"
            ) from None
        if number == 1:
            if not isinstance(value, dict) or value.get("kind") != "run":
                raise RunFileError(f"{path}: not a barsym run file (its first line is not a run header)")
            if value.get("version") != RUN_VERSION:
                raise RunFileError(
                    f"{path}: run file version {value.get('version')!r}; this barsym reads version {RUN_VERSION}"
                )
            header = value
        elif isinstance(value, dict) and value.get("kind") == "task" and isinstance(value.get("key"), str):
            records.append((number, value))
        else:
            raise RunFileError(f"{path}: line {number} is not a task record")
    if header is None:
        raise RunFileError(f"{path}: empty or cut off before its header; delete it or use another --run file")
    return header, records, complete


def check_resumable(path: Path, header: dict) -> None:
    """Before any work: ``path`` can be a run file for a run with ``header`` (RunFileError says why not)."""
    path = Path(path)
    if path.is_dir():
        raise RunFileError(f"--run {path} is a folder; give the name of a file")
    if not path.parent.is_dir():
        raise RunFileError(f"--run {path}: the folder {path.parent} does not exist")
    if path.exists() and not path.is_file():
        raise RunFileError(f"--run {path}: not a regular file; give the name of a file")
    why = unwritable(path, replaced=False)  # a read-only file or folder: found now, not after the first task
    if why is not None:
        raise RunFileError(f"--run {path}: {why}")
    if not path.is_file() or b"\n" not in _read(path):
        return
    old, _, _ = read_run(path)
    if _comparable(old) != _comparable(header):
        raise RunFileError(
            f"--run {path} holds a run of {old.get('planner')!r} with other settings "
            f"({_difference(old, header)}); use another --run file to start a new run"
        )
    changed = _other_files(old.get("model"), header.get("model"))
    if changed:
        raise RunFileError(
            f"--run {path} was run with another {changed}: its header names the model its tasks ran, and the "
            "rest would run another; use another --run file to start a new run"
        )


def _other_files(old, new) -> str | None:
    """Which model file differs between two headers' models by its SHA-256 (``GGUF``, ``adapter``), where both
    name it; None when they agree or one does not say (a header from before the digests, a server)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    for key, what in (("gguf_sha256", "GGUF"), ("adapter_sha256", "adapter")):
        if old.get(key) and new.get(key) and old[key] != new[key]:
            return (
                f"{what} ({old.get(key.removesuffix('_sha256'))}, sha256 {old[key][:12]}; now sha256 {new[key][:12]})"
            )
    if old.get("gguf_sha256") and new.get("gguf_sha256") and old.get("adapter") != new.get("adapter"):
        return f"adapter ({old.get('adapter')}; now {new.get('adapter')})"  # one of them none
    return None


class RunFile:
    """An open run file: the records already there, and :meth:`append` for each new one."""

    def __init__(self, path: Path, header: dict):
        self.path = Path(path)
        self.done: dict[str, dict] = {}
        self.lines: dict[str, list[tuple[int, dict]]] = {}  # key -> every (line, record) of it, in file order
        self._count = 1  # the number of the file's last line
        self._compressed = wants_compression(self.path)  # or an existing file's first bytes say so (_open)
        try:
            self._file = open(self.path, "a+b", buffering=0)  # unbuffered: nothing left to flush, or fail, at close
        except OSError as exc:
            raise RunFileError(f"--run {self.path}: cannot open ({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(self._file.fileno()).st_mode):  # /dev/full, a FIFO: nothing to resume
            self._file.close()
            raise RunFileError(f"--run {self.path}: not a regular file; give the name of a file")
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            raise RunFileError(f"--run {self.path}: another barsym run is writing it") from None
        try:
            self._open(header)
        except BaseException:
            self.close()
            raise

    def _open(self, header: dict) -> None:
        raw = _raw(self.path)
        self._compressed = self._compressed or is_compressed(raw)
        if b"\n" not in _read(self.path):  # new, or killed before its header was written whole
            os.truncate(self.path, 0)
            self._write(header)
            return
        old, numbered, complete = read_run_lines(self.path)
        if is_compressed(raw):
            complete = _compressed_end(self.path, raw, complete)
        if _comparable(old) != _comparable(header):
            raise RunFileError(
                f"--run {self.path} holds a run of {old.get('planner')!r} with other settings "
                f"({_difference(old, header)}); use another --run file to start a new run"
            )
        os.truncate(self.path, complete)  # drop what a kill cut off, so the next line starts clean
        for number, record in numbered:
            self.done.setdefault(record["key"], record)
            self.lines.setdefault(record["key"], []).append((number, record))
        self._count = numbered[-1][0] if numbered else 1

    def append(self, record: dict) -> None:
        self._write(record)
        self.done.setdefault(record["key"], record)
        self._count += 1
        self.lines.setdefault(record["key"], []).append((self._count, record))

    def _write(self, value: dict) -> None:
        """One line, written whole and synced to disk; a full disk is one line saying what was kept.

        The file is unbuffered and written with ``os.write`` until every byte is
        out: a short write on a full disk is seen here, the line's start is cut
        off again with ``ftruncate`` (no half line is left for the next run),
        and closing the file later has no buffer whose flush could fail again.
        """
        line = (hide_secrets(json.dumps(value, sort_keys=True)) + "\n").encode("utf-8")
        if self._compressed:
            line = compressed_line(line)
        descriptor = self._file.fileno()
        end = None
        try:
            end = os.lseek(descriptor, 0, os.SEEK_END)
            view = memoryview(line)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        except OSError as exc:
            if end is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(descriptor, end)
            raise RunFileError(
                f"--run {self.path}: cannot write ({exc.strerror}); {len(self.done)} finished task(s) are kept "
                "in it: free some space, then resume with the same command (it runs the rest)"
            ) from None

    def close(self) -> None:
        if not self._file.closed:
            with contextlib.suppress(OSError):  # unbuffered: there is nothing left to lose here
                self._file.close()

    def __enter__(self) -> "RunFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _raw(path: Path) -> bytes:
    try:
        return read_input(path)
    except OSError as exc:
        raise RunFileError(f"--run {path}: cannot read ({exc.strerror})") from None


def _read(path: Path) -> bytes:
    """The lines of a run file, uncompressed when it is compressed."""
    return _text(path, _raw(path))


def _text(path: Path, data: bytes) -> bytes:
    if not is_compressed(data):
        return data
    try:
        return members(data, MAX_INPUT_BYTES)[0]
    except CompressedRunError as exc:
        raise RunFileError(f"{path}: {exc}; not a barsym run file, or damaged (use another --run file)") from None


def _compressed_end(path: Path, raw: bytes, complete: int) -> int:
    """Where to cut a compressed file so that it ends after its ``complete`` bytes of whole lines."""
    for text_end, end in members(raw, MAX_INPUT_BYTES)[1]:
        if text_end == complete:
            return end
    if complete == 0:
        return 0
    raise RunFileError(
        f"--run {path}: its last line is damaged inside a compressed part that holds more lines; "
        f"uncompress it (gunzip {path}) and resume with the plain file"
    )


#: options that change how fast a run goes, not what it finds: a run may resume with other values
UNSCORED_OPTIONS = ("threads", "timeout")


def _comparable(header: dict) -> dict:
    """What must agree to resume: planner, options, rules, world, data set (not when or how it ran).

    A bundled task set is the set of that name wherever barsym is installed: its folder (``dataset``) moves
    with every reinstall or checkout, so a run of ``--dataset bar`` resumes by the name, not the path."""
    out = {k: header.get(k) for k in ("planner", "spec", "dataset", "dialect")}
    name = header.get("dataset_name")
    if isinstance(name, str) and bundled(name) is not None and Path(str(out["dataset"])).name == name:
        out["dataset"] = f"bundled:{name}"
    if isinstance(out["spec"], dict):
        options = {k: v for k, v in (out["spec"].get("options") or {}).items() if k not in UNSCORED_OPTIONS}
        out["spec"] = {**out["spec"], "options": options}
    return out


def _difference(old: dict, new: dict) -> str:
    a, b = _comparable(old), _comparable(new)
    if a["planner"] != b["planner"] or a["dataset"] != b["dataset"] or a["dialect"] != b["dialect"]:
        keys = [k for k in ("planner", "dataset", "dialect") if a[k] != b[k]]
        return "; ".join(f"{k} {a[k]!r}, now {b[k]!r}" for k in keys)
    old_spec, new_spec = a["spec"] or {}, b["spec"] or {}
    changed = sorted(k for k in set(old_spec) | set(new_spec) if old_spec.get(k) != new_spec.get(k))
    options = (old_spec.get("options") or {}, new_spec.get("options") or {})
    if changed == ["options"]:
        changed = sorted(k for k in set(options[0]) | set(options[1]) if options[0].get(k) != options[1].get(k))
    return "differs in " + ", ".join(changed)
