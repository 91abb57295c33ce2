"""Replacing a file all at once: a reader, a crash or a full disk sees the old file or the new one, never half.

Why one helper for every file barsym replaces (``-o FILE`` of every command,
``memory export``, the call log's and caches' own files): writing in place
truncates the old content first, so a full disk, a kill or a bad value met
half-way through left a user's plan file holding 4,096 bytes of cut JSON.
Here the new content goes to a temporary file in the same folder (same file
system, so the rename is atomic), is flushed and ``fsync``-ed, and only then
renamed over the old name; on any failure the temporary file is removed and
the old file is as it was.

Two kinds of target are not replaced: a name that is a symbolic link is
followed for the user's own outputs (``follow=True``: the file it points at
is replaced, the link stays), and something that is not a regular file
(``/dev/null``, ``/dev/stdout``, a FIFO) is written directly, since renaming
over a device would remove it. barsym's private files pass ``follow=False``:
a link planted in their place is replaced by a file, never written through.

The lowest layer (tests/test_layers.py): it imports nothing of barsym's.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["replacing", "write_atomic"]


def _umask() -> int:
    """The process's umask, read without changing it where Linux allows (``/proc/self/status``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read by setting it, and set it straight back
    os.umask(mask)
    return mask


def _target(path: Path, follow: bool) -> tuple[Path, os.stat_result | None]:
    """The file to replace (a link followed when ``follow``) and its status, None when it does not exist yet."""
    if follow:
        path = Path(os.path.realpath(path))
    try:
        return path, (os.stat(path) if follow else os.lstat(path))
    except FileNotFoundError:
        return path, None


@contextlib.contextmanager
def replacing(path: Path | str, mode: int | None = None, follow: bool = True, binary: bool = False) -> Iterator[IO]:
    """A handle whose content replaces ``path`` when the ``with`` block ends without an exception.

    ``mode``: the new file's permission bits; default the old file's, or for a
    new file what the umask gives (as ``open(path, "w")`` would). The OSError
    of a failed write (``ENOSPC``, ``EDQUOT``, ``EACCES``) propagates after
    the temporary file is removed; ``path`` is untouched.
    """
    target, info = _target(Path(path), follow)
    if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
        with open(target, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as direct:
            yield direct  # a device or FIFO: there is no old content to keep, and no renaming over it
        return
    if mode is None:
        kept = info is not None and stat.S_ISREG(info.st_mode)
        mode = stat.S_IMODE(info.st_mode) if kept and info is not None else 0o666 & ~_umask()
    import tempfile  # when a file is written: a command that writes none does not load it

    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    handle = os.fdopen(descriptor, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))
    try:
        os.fchmod(descriptor, mode)
        yield handle
        handle.flush()
        os.fsync(descriptor)
        handle.close()
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):  # closing flushes what is buffered: on a full disk that fails again
            handle.close()
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: some file systems cannot ``fsync`` a folder)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_atomic(path: Path | str, data: str | bytes, mode: int | None = None, follow: bool = True) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) through :func:`replacing`."""
    with replacing(path, mode=mode, follow=follow, binary=isinstance(data, bytes)) as handle:
        handle.write(data)
