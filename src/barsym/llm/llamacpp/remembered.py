"""Small facts a backend remembers between processes, in its state folder.

Some checks depend only on files and the llama.cpp build: whether a load profile survives a batch
on this CPU (:mod:`.runtime_check`), whether an adapter changes the model's output, the base file's
SHA-256 (:mod:`.adapter`). Each is kept as one small JSON file named by a hash of what it depends on
(``parts``: file identities, library version, CPU features), and read back only for exactly those
parts. The files are 0600 in a 0700 folder (:mod:`barsym.private_files`); a file another user could
have planted is not read, so the check it would skip runs again; a folder that cannot be written
keeps nothing, and the check runs again next time.

**A fact can only skip work, never change a result.** Each caller takes from a fact only the one
answer that lets it skip a check it would otherwise make -- the base file's digest when it is the
card's (:func:`.adapter.fits_base`), a passed adapter check (:meth:`.backend.LlamaCppBackend.
_apply_adapter`), a profile that passed its child-process check (:mod:`.runtime_check`) -- and
for anything else (another value, a wrong type, a file that is damaged, forged or made for other
parts) does the work again. So a forged fact can at worst save a check the truth would have
saved too: the adapter is never turned off by one, nor the model run another way
(``tests/hostile/test_hostile_remembered.py`` forges each kind).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ...private_files import private_dir, untrusted, write_private

__all__ = ["recall", "remember"]


def recall(folder: Path | None, kind: str, *parts: str) -> dict | None:
    """What :func:`remember` kept in ``folder`` for ``kind`` and exactly these ``parts`` (None: nothing)."""
    if folder is None:
        return None
    path = _path(folder, kind, parts)
    if untrusted(folder) or untrusted(path):
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("parts") == list(parts) else None


def remember(folder: Path | None, kind: str, data: dict, *parts: str) -> None:
    """Keep ``data`` about ``parts`` in ``folder`` (None, or a folder that cannot be written: nothing kept)."""
    if folder is None:
        return
    try:
        write_private(_path(private_dir(folder), kind, parts), json.dumps({**data, "parts": list(parts)}).encode())
    except OSError:
        pass


def _path(folder: Path, kind: str, parts: tuple[str, ...]) -> Path:
    return folder / f"{kind}-{hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]}.json"
