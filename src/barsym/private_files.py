"""barsym's own files: created 0600 in 0700 folders, and trusted only when nobody else can write them.

Why one module: the knowledge-base cache, the call log (it holds prompts and
command lines), the memory database and the saved prompt states are all
files barsym makes for the user alone, in folders another user may share
(``/tmp``, a team folder through ``$BARSYM_CACHE_DIR``). A file someone else
can write is a file someone else can plant: a cache whose recipes were
changed, a symbolic link that makes barsym write its tables into another
database. So every writer goes through the same three calls:

* :func:`private_dir` makes a folder (and any missing parents) mode 0700;
* :func:`untrusted` says why a folder or file must not be used (a symbolic
  link, owned by another user, writable by group or others), or None;
* :func:`create_private` makes an empty file 0600 without following a link
  (for SQLite, which then writes into it and gives its ``-wal``/``-shm``
  files the same mode), and :func:`write_private` replaces a file's content
  atomically with a 0600 file.

The lowest layer of barsym (tests/test_layers.py): everything may import it,
it imports only :mod:`barsym.atomic_files`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .atomic_files import write_atomic

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "create_private",
    "private_dir",
    "untrusted",
    "untrusted_side_file",
    "write_private",
]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(path: Path | str) -> Path:
    """``path`` as a folder, every part barsym has to create made mode 0700 (existing ones are left alone).

    Raises OSError as ``os.mkdir`` does (a read-only home, a file in the way).
    """
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:  # made by another process meanwhile: checked by untrusted() like any other
            continue
        os.chmod(folder, PRIVATE_DIR_MODE)  # a umask such as 0o277 must not make it unusable either
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    return path


def untrusted(path: Path | str) -> str | None:
    """Why barsym must not read or write ``path`` (a folder or a file), or None if it may (or it does not exist).

    Refused: a symbolic link (it can point at any file of the user's), anything
    owned by another user, anything group- or other-writable (the sticky bit of
    ``/tmp`` does not stop another user from planting a new file in it).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"can be written by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


#: the files SQLite keeps beside a database: written into as much as the database itself
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def untrusted_side_file(path: Path | str) -> str | None:
    """Why a SQLite database's side file (``-wal``, ``-shm``, ``-journal``) must not be used, or None.

    SQLite opens them without a question: a ``-wal`` others can write is a way to
    plant rows in a database they cannot write, and one left 0666 by an older
    database is used silently forever after. A side file must be a file (not a
    link) of the database's owner, writable by no one the database itself does
    not let write. The message names the side file.
    """
    try:
        main = os.stat(path)
    except OSError:
        return None
    for suffix in SQLITE_SIDE_FILES:
        side = f"{path}{suffix}"
        try:
            info = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{side} cannot be checked ({exc.strerror or exc})"
        if stat.S_ISLNK(info.st_mode):
            return f"{side} is a symbolic link"
        if info.st_uid != main.st_uid:
            return f"{side} is owned by another user (uid {info.st_uid})"
        looser = info.st_mode & ~main.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if looser:
            return f"{side} can be written by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def create_private(path: Path | str) -> bool:
    """Create ``path`` as an empty 0600 file unless it exists; never through a symbolic link.

    Returns True when it was created here. A link in its place raises OSError
    (``O_NOFOLLOW``), as does a folder that cannot be written.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags, PRIVATE_FILE_MODE)
    except FileExistsError:
        if os.path.islink(path):
            raise OSError(f"{path} is a symbolic link") from None
        return False
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)
    finally:
        os.close(descriptor)
    return True


def write_private(path: Path | str, data: bytes) -> None:
    """Replace ``path`` with a 0600 file holding ``data``, atomically (a reader sees the old or the new file).

    :func:`barsym.atomic_files.write_atomic`, the one helper every replaced file goes through, with
    ``follow=False``: a link in ``path``'s place is replaced by a file rather than written through.
    """
    write_atomic(path, data, mode=PRIVATE_FILE_MODE, follow=False)


def unwritable(path: Path | str, replaced: bool = True) -> str | None:
    """Why ``path`` cannot be written (as words to follow its name), or None: checked before the work starts.

    An evaluation takes minutes with a model; finding then that its output names
    a folder that does not exist throws the run away. Opening for append tries
    exactly what the final write will need (permissions, read-only disks, ACLs,
    running as root) without touching an existing file; a file this creates is
    removed again, so a failed run leaves nothing behind. ``replaced``: the file
    will be replaced (:mod:`barsym.atomic_files` makes the new one beside it), so
    its folder must take a new file too; a run file, only appended to, need not.
    """
    path = Path(path)
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except IsADirectoryError:
        return "is a folder; give the name of a file (in it, or elsewhere)"
    except FileNotFoundError:
        return f"folder {path.parent} does not exist; create it or write elsewhere"
    except OSError as exc:
        return f"cannot write there ({exc.strerror})"
    except ValueError as exc:  # a NUL byte in the name
        return f"not a usable file name ({exc})"
    if not existed:
        path.unlink(missing_ok=True)
    folder = Path(os.path.realpath(path)).parent
    if replaced and os.path.isfile(path) and not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in its folder {folder} (the new file is made beside the old one, then renamed)"
    return None
