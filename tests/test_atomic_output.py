"""Issue 34, item 1: every file barsym replaces is replaced all at once, and on a full disk the old one is kept.

The helper (:mod:`barsym.atomic_files`) first, with a write that fails half-way;
then the issue's reproduction on a real full disk (a 300 KiB tmpfs, mounted
where ``mount`` is permitted: as root, as on CI) for ``plan -o``, ``eval -o``
and ``memory export -o``; then a scan of the source showing that nothing else
opens a file for writing.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path

import pytest
from tmpfs import mounted_tmpfs

from barsym import atomic_files
from barsym.atomic_files import replacing, write_atomic
from cli_run import one_line, run
from testdata import BAR_DIR, REPO

PRECIOUS = '{"precious": true}\n'


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------------ the helper


def test_a_write_that_fails_half_way_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "plan.json"
    target.write_text(PRECIOUS)

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic_files.os, "fsync", full)
    with pytest.raises(OSError) as info:
        write_atomic(target, "x" * 100_000)
    assert info.value.errno == errno.ENOSPC
    assert target.read_text() == PRECIOUS and _leftovers(tmp_path) == []


def test_an_exception_inside_the_block_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text(PRECIOUS)
    with pytest.raises(ValueError):
        with replacing(target) as handle:
            handle.write("half a file")
            raise ValueError("a bad value met half-way")
    assert target.read_text() == PRECIOUS and _leftovers(tmp_path) == []


def test_the_new_content_replaces_the_old_keeping_its_mode(tmp_path):
    target = tmp_path / "plan.json"
    target.write_text(PRECIOUS)
    target.chmod(0o640)
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_new_file_gets_what_the_umask_gives(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


def test_a_link_to_the_users_file_is_followed_and_kept(tmp_path):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text(PRECIOUS)
    link.symlink_to(real)
    write_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_a_private_file_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    victim, link = tmp_path / "victim", tmp_path / "cache.json"
    victim.write_text(PRECIOUS)
    link.symlink_to(victim)
    write_atomic(link, "cache\n", mode=0o600, follow=False)
    assert not link.is_symlink() and link.read_text() == "cache\n" and victim.read_text() == PRECIOUS


def test_a_device_is_written_to_not_renamed_over(tmp_path):
    write_atomic("/dev/null", "nothing\n")  # renaming over /dev/null would remove the device
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# ------------------------------------------------------------------ a real full disk


@pytest.fixture
def full_disk(tmp_path):
    """A 300 KiB tmpfs holding ``plan.json`` and a filler that takes the rest: the issue's reproduction."""
    with mounted_tmpfs(tmp_path, "300k") as folder:
        (folder / "plan.json").write_text(PRECIOUS)
        with open(folder / "filler", "wb") as filler:
            try:
                filler.write(b"\0" * 300_000)
            except OSError:
                pass  # the disk is full: what was written stays
        yield folder


@pytest.mark.skipif(not BAR_DIR.exists(), reason="BAR dataset not available")
@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "diamond_pickaxe", "--planner", "symbolic", "--format", "json", "-o"],
        ["eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "3", "--quiet", "-o"],
        ["memory", "export", "--memory", "MEMORY", "-o"],
    ],
    ids=["plan", "eval", "memory export"],
)
def test_output_on_a_full_disk_keeps_the_old_file(capsys, tmp_path, full_disk, argv):
    if "MEMORY" in argv:
        memory = tmp_path / "m.sqlite"
        code, _, err = run(capsys, "memory", "build", "--memory", memory, "--dataset", BAR_DIR, "--limit", "3")
        assert code == 0, err
        argv = [memory if a == "MEMORY" else a for a in argv]
    target = full_disk / "plan.json"
    code, out, err = run(capsys, *argv, target)
    assert code == 2 and one_line(err), err
    assert "No space left on device" in err and "left as it was" in err
    assert target.read_text() == PRECIOUS  # not 4,096 bytes of cut JSON
    assert _leftovers(full_disk) == []


# ------------------------------------------------------------------ one helper: nothing else opens a file to write

#: what opens a file for writing, or swaps one in
WRITING = re.compile(
    r"""open\([^)]*["'][rbt]*[wax+][wabxt+]*["']|\.write_text\(|\.write_bytes\(|os\.replace\(|os\.rename\(|"""
    r"""NamedTemporaryFile|mkstemp|O_WRONLY|O_RDWR|shutil\.copy|json\.dump\("""
)
#: the only places allowed to: the helper itself; private_files' empty 0600 file for SQLite and its
#: writability probe (opens for append, writes nothing); the run file, appended to line by line, never replaced
ALLOWED = {
    "atomic_files.py": None,
    "private_files.py": {"O_WRONLY", 'open(path, "a"'},
    "eval/runfile.py": {'open(self.path, "a+b"'},
    "cli.py": {"os.open(os.devnull, os.O_WRONLY)"},  # a stdout that failed is pointed at /dev/null: no file written
}


def test_no_other_place_opens_a_file_for_writing():
    source = REPO / "src" / "barsym"
    found = []
    for path in sorted(source.rglob("*.py")):
        name = path.relative_to(source).as_posix()
        if name in ALLOWED and ALLOWED[name] is None:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = WRITING.search(line)
            if match and not any(allowed in line for allowed in ALLOWED.get(name) or ()):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "write through barsym.atomic_files (write_atomic / replacing):\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for():
    for line in ('open(p, "w")', "path.write_text(x)", "os.replace(a, b)", 'open(p, "a+b")', "json.dump(x, f)"):
        assert WRITING.search(line), line
    for line in ('open(p, "rb")', "read_text()", "json.dumps(x)", 'open(p, encoding="ascii")'):
        assert not WRITING.search(line), line


def test_memory_export_to_stdout_is_unchanged(capsys, tmp_path):
    if not BAR_DIR.exists():
        pytest.skip("BAR dataset not available")
    memory = tmp_path / "m.sqlite"
    assert run(capsys, "memory", "build", "--memory", memory, "--dataset", BAR_DIR, "--limit", "1")[0] == 0
    code, out, _ = run(capsys, "memory", "export", "--memory", memory)
    target = tmp_path / "out.jsonl"
    assert run(capsys, "memory", "export", "--memory", memory, "-o", target)[0] == 0
    assert code == 0 and target.read_text() == out and json.loads(out.splitlines()[0])["steps"]


def test_a_file_in_a_folder_that_takes_no_new_file_is_refused_before_the_work(tmp_path, monkeypatch):
    from barsym import private_files

    target = tmp_path / "plan.json"
    target.write_text(PRECIOUS)
    real_access = os.access
    monkeypatch.setattr(private_files.os, "access", lambda p, mode: p != tmp_path and real_access(p, mode))
    why = private_files.unwritable(target)
    assert why is not None and "cannot write in its folder" in why
    assert private_files.unwritable(target, replaced=False) is None  # a run file is appended to, in place
