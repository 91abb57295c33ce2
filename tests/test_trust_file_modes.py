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
    from barsym.reasoning.calls.call_log import CallLog

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


# ----------------------------------------------------------------- issue 34: SQLite's side files, saved prompt states


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
@pytest.mark.parametrize("damage", ["0666", "link"])
def test_a_loose_or_linked_side_file_of_the_call_log_is_refused(tmp_path, suffix, damage, loose_umask):
    from barsym.reasoning.calls.call_log import CallLog, LogError

    path = tmp_path / "logs.db"
    CallLog(path).close()
    side = tmp_path / f"logs.db{suffix}"
    side.unlink(missing_ok=True)
    if damage == "link":
        (tmp_path / "elsewhere").write_bytes(b"")
        side.symlink_to(tmp_path / "elsewhere")
    else:
        side.write_bytes(b"")
        side.chmod(0o666)
    for create in (True, False):  # writing a plan's calls, and barsym logs
        with pytest.raises(LogError, match=f"logs.db{suffix}"):
            CallLog(path, create=create)


def test_a_memory_with_a_side_file_others_can_write_is_one_line(tmp_path, capsys, loose_umask):
    path = tmp_path / "m.sqlite"
    with MemoryStore(path) as store:
        store.record_plan("stick", "symbolic", ("stick", 4), ["craft 4 stick"], [], [])
    wal = tmp_path / "m.sqlite-wal"
    wal.write_bytes(b"")
    wal.chmod(0o666)
    code, _, err = run(capsys, "memory", "stats", "--memory", path)
    assert code == 2 and err.count("\n") == 1 and "m.sqlite-wal can be written by other users" in err, err


def _state(store, tokens=(1, 2, 3)):
    from barsym.llm.llamacpp.prefix_state import PrefixKey, StateCheck

    key = PrefixKey.for_prompt("model", "prompt", list(tokens), "0.3", "ctx")
    return key, list(tokens), StateCheck((1,), (0.5,))


def test_saved_prompt_states_follow_the_same_rules(tmp_path, loose_umask):
    import warnings

    from barsym.llm.llamacpp.prefix_state import PrefixStateStore, PrefixStateWarning

    folder = tmp_path / "cache" / "llm-state"
    store = PrefixStateStore(folder)
    key, tokens, check = _state(store)
    saved = store.save(key, tokens, b"kv-cells", check)
    assert saved is not None and _mode(saved) == 0o600
    assert _mode(folder) == 0o700 and _mode(tmp_path / "cache") == 0o700  # every folder made here
    assert store.load(key, tokens) is not None
    os.chmod(saved, 0o666)  # a state someone else could have rewritten
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.load(key, tokens) is None
    assert any(
        issubclass(w.category, PrefixStateWarning) and "written by other users" in str(w.message) for w in caught
    )
    os.chmod(saved, 0o600)
    os.chmod(folder, 0o777)  # a folder others can plant files in: nothing is read from it or saved in it
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert store.load(key, tokens) is None
    assert store.save(key, tokens, b"kv-cells", check) is None
