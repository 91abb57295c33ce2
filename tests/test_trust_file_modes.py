"""Issue 20, file modes: every file barsym makes for itself is 0600, in 0700 folders it makes.

The knowledge-base cache and the call log have their own tests
(test_trust_kb_cache.py, test_trust_call_log.py); here the memory database,
the shared helper itself, and all three made in one fresh home, as ``ls -l``
would show them.
"""

from __future__ import annotations

import os
import stat

import pytest

from barsym.memory import MemoryStore
from barsym.private_files import create_private, private_dir, untrusted, write_private
from cli_run import run


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture()
def loose_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_memory_database_is_0600(tmp_path, loose_umask):
    path = tmp_path / "memory.sqlite"
    with MemoryStore(path) as store:
        store.record_plan("stick", "symbolic", ("stick", 4), ["craft 4 stick"], [], [])
        made = {p.name: _mode(p) for p in tmp_path.iterdir()}
    assert made and all(mode == 0o600 for mode in made.values()), made


def test_memory_build_makes_the_default_folder_0700(tmp_path, monkeypatch, capsys, loose_umask):
    monkeypatch.delenv("BARSYM_MEMORY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, out, err = run(capsys, "memory", "clear", "--yes")
    assert code == 0, err
    folder = tmp_path / "data" / "barsym"
    assert _mode(folder) == 0o700 and _mode(tmp_path / "data") == 0o700
    assert all(_mode(p) == 0o600 for p in folder.iterdir())


def test_the_helper(tmp_path, loose_umask):
    folder = private_dir(tmp_path / "a" / "b")
    assert _mode(folder) == 0o700 and _mode(tmp_path / "a") == 0o700
    assert create_private(folder / "f") and not create_private(folder / "f")
    assert _mode(folder / "f") == 0o600
    write_private(folder / "g", b"data")
    assert (folder / "g").read_bytes() == b"data" and _mode(folder / "g") == 0o600
    assert untrusted(folder) is None and untrusted(folder / "f") is None and untrusted(folder / "missing") is None
    (folder / "link").symlink_to(folder / "f")
    assert untrusted(folder / "link") == "is a symbolic link"
    with pytest.raises(OSError):
        create_private(folder / "link")
    os.chmod(folder / "f", 0o620)
    assert "mode 0620" in untrusted(folder / "f")


def test_a_fresh_cache_log_and_memory_are_all_private(tmp_path, monkeypatch, loose_umask):
    """What ``ls -l`` of a fresh cache, log and memory shows (printed with -s for the report)."""
    from barsym import kb as kb_module
    from barsym.reasoning.call_log import CallLog

    cache = tmp_path / "home" / ".cache" / "barsym"
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(cache))
    kb_module._load_uncached("1.16.5", kb_module.default_data_dir(), True)
    log = CallLog(cache / "logs.db")
    log.start_run("barsym plan stick", "bar", "4 stick", None)
    memory_folder = private_dir(tmp_path / "home" / ".local" / "share" / "barsym")
    with MemoryStore(memory_folder / "memory.sqlite") as store:
        store.record_plan("stick", "symbolic", ("stick", 4), ["craft 4 stick"], [], [])
        made = sorted(p for p in (tmp_path / "home").rglob("*"))
        listing = {str(p.relative_to(tmp_path)): (stat.filemode(os.lstat(p).st_mode), p.is_dir()) for p in made}
    log.close()
    print("\n".join(f"{shown}  {name}" for name, (shown, _) in listing.items()))
    for name, (shown, folder) in listing.items():
        assert shown == ("drwx------" if folder else "-rw-------"), (name, shown)
