"""Issue 20, security 1: a file planted in the knowledge-base cache never runs code and never changes a plan.

The cache used to be a pickle (``pickle.load`` runs what the file says) read
from any folder. Now it is JSON checked against today's data, read only from
a folder and file that no one but the user can write.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import stat
import warnings
from pathlib import Path

import pytest

from barsym import kb as kb_module
from barsym.kb import cache as kb_cache
from barsym.kb import default_data_dir
from cli_run import run

VERSION = "1.16.5"


class _Planted:
    """What an attacker's pickle does on load: here, only touch a marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _stamp() -> str:
    return kb_cache.fingerprint(VERSION, default_data_dir())


def _cache_file(folder: Path) -> Path:
    return folder / f"kb-{VERSION}-{_stamp()[:20]}.json"


def _load(folder: Path, monkeypatch):
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(folder))
    return kb_module._load_uncached(VERSION, default_data_dir(), True)


def _stick_count(kb) -> int:
    return kb.crafts["stick"][0].count


def _with_64_sticks(kb):
    recipe = dataclasses.replace(kb.crafts["stick"][0], count=64)
    return dataclasses.replace(kb, crafts={**kb.crafts, "stick": (recipe,)})


@pytest.fixture()
def private(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    return folder


# ----------------------------------------------------------------- planted pickles run nothing


@pytest.mark.parametrize("name", ["old", "new"])
def test_a_planted_pickle_runs_no_code(private, tmp_path, monkeypatch, name):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Planted(marker))
    # the old cache name (never read any more) and the new one (read as JSON, refused)
    target = private / f"kb-{VERSION}-{_stamp()[:20]}.pickle" if name == "old" else _cache_file(private)
    target.write_bytes(payload)
    target.chmod(0o600)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kb = _load(private, monkeypatch)
    assert not marker.exists()
    assert _stick_count(kb) == 4
    refused = [str(w.message) for w in caught if "header is not JSON" in str(w.message)]
    assert len(refused) == (1 if name == "new" else 0)


def test_the_source_has_no_pickle():
    """Nothing is unpickled but a training checkpoint's tensors, by an unpickler that builds nothing else
    (``distill/checkpoint.py``: its ``find_class`` names the few it allows; tests/hostile/test_hostile_checkpoints.py
    plants the rest)."""
    import ast

    src = Path(kb_module.__file__).resolve().parent.parent
    users = [p.relative_to(src) for p in src.rglob("*.py") if "import pickle" in p.read_text()]
    assert users == [Path("distill/checkpoint.py")]
    tree = ast.parse((src / users[0]).read_text())
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not calls & {"pickle.load", "pickle.loads", "pickle.Unpickler"}  # only the restricted subclass reads
    readers = [
        n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and "pickle.Unpickler" in map(ast.unparse, n.bases)
    ]
    assert readers and all("find_class" in {f.name for f in r.body if isinstance(f, ast.FunctionDef)} for r in readers)


# ----------------------------------------------------------------- planted knowledge bases change no plan


def test_an_edited_cache_is_refused_by_its_checksum(private, monkeypatch):
    kb = _load(private, monkeypatch)  # writes the real cache
    path = _cache_file(private)
    header, _, _ = path.read_bytes().partition(b"\n")
    forged = kb_cache.encode(_with_64_sticks(kb), _stamp()).partition(b"\n")[2]
    path.write_bytes(header + b"\n" + forged)  # today's header, a body with 64 sticks
    with pytest.warns(RuntimeWarning, match="does not match its checksum"):
        again = _load(private, monkeypatch)
    assert _stick_count(again) == 4
    assert _stick_count(kb_cache.read(path, _stamp())) == 4  # and the file was rebuilt


def test_a_cache_of_other_data_is_refused(private, monkeypatch):
    kb = _load(private, monkeypatch)
    path = _cache_file(private)
    path.write_bytes(kb_cache.encode(_with_64_sticks(kb), "0" * 64))  # self-consistent, built from other data
    with pytest.warns(RuntimeWarning, match="built from other data"):
        assert _stick_count(_load(private, monkeypatch)) == 4


def test_a_consistent_forgery_in_a_shared_folder_is_not_read(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    kb = kb_module.build_knowledge_base(VERSION, default_data_dir())
    path = _cache_file(shared)
    path.write_bytes(kb_cache.encode(_with_64_sticks(kb), _stamp()))  # header and checksum both right
    path.chmod(0o600)
    with pytest.warns(RuntimeWarning, match="can be written by other users"):
        assert _stick_count(_load(shared, monkeypatch)) == 4


def test_a_planted_cache_does_not_change_the_plan_on_the_command_line(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    kb = kb_module.build_knowledge_base(VERSION, default_data_dir())
    _cache_file(shared).write_bytes(kb_cache.encode(_with_64_sticks(kb), _stamp()))
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(shared))
    kb_module._load.cache_clear()
    try:
        code, out, err = run(capsys, "plan", "stick", "--count", "64", "--planner", "symbolic")
    finally:
        kb_module._load.cache_clear()
    assert code == 0, err
    assert "craft 64 stick" in out and "craft 32 planks" in out, out  # 16 crafts of 2 planks, not one
    warnings = [line for line in err.splitlines() if "knowledge-base cache" in line]
    assert len(warnings) == 1 and "can be written by other users (mode 1777)" in warnings[0]


# ----------------------------------------------------------------- folders and files others control


def test_a_1777_folder_is_neither_read_nor_written(tmp_path, monkeypatch):
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.warns(RuntimeWarning, match=r"mode 1777"):
        kb = _load(shared, monkeypatch)
    assert _stick_count(kb) == 4
    assert list(shared.iterdir()) == []


def test_a_group_writable_cache_file_is_not_read(private, monkeypatch):
    _load(private, monkeypatch)
    _cache_file(private).chmod(0o664)
    with pytest.warns(RuntimeWarning, match=r"can be written by other users \(mode 0664\)"):
        _load(private, monkeypatch)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to give a file away")
def test_a_folder_of_another_user_is_not_read(private, monkeypatch):
    _load(private, monkeypatch)
    os.chown(private, 65534, 65534)
    with pytest.warns(RuntimeWarning, match="owned by another user"):
        _load(private, monkeypatch)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_symbolic_link_is_not_followed(private, tmp_path, monkeypatch, what):
    _load(private, monkeypatch)
    if what == "folder":
        link = tmp_path / "link"
        link.symlink_to(private)
        with pytest.warns(RuntimeWarning, match="is a symbolic link"):
            _load(link, monkeypatch)
    else:
        real = _cache_file(private)
        moved = tmp_path / "elsewhere.json"
        real.rename(moved)
        real.symlink_to(moved)
        with pytest.warns(RuntimeWarning, match="is a symbolic link"):
            _load(private, monkeypatch)
        assert real.is_symlink()  # not replaced through, not rewritten


# ----------------------------------------------------------------- what barsym creates


def test_the_cache_folder_and_file_are_private(tmp_path, monkeypatch):
    folder = tmp_path / "fresh" / "barsym"
    old = os.umask(0o022)
    try:
        _load(folder, monkeypatch)
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert [f.suffix for f in files] == [".json"]
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600


def test_the_cache_round_trips_every_field(private, monkeypatch):
    built = kb_module.build_knowledge_base(VERSION, default_data_dir())
    read = kb_cache.decode(kb_cache.encode(built, "x"), "x")
    for field in dataclasses.fields(built):
        assert getattr(read, field.name) == getattr(built, field.name), field.name
