"""``eval`` and ``execute`` with ``--memory PATH --record`` (and ``$BARSYM_MEMORY``), and unusable memory files.

The symbolic planner stands in for the model here: what is tested is the
recording and the refusals, which do not depend on who decomposes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from barsym.cli import main
from barsym.memory import MemoryStore
from testdata import BAR_DIR

pytestmark = pytest.mark.skipif(not BAR_DIR.exists(), reason="BAR dataset not available")


def _counts(path):
    with MemoryStore(path, readonly=True) as store:
        return store.counts()


def test_eval_records_plans_and_their_runs_then_answers_from_them(tmp_path, capsys):
    m = tmp_path / "m.sqlite"
    args = ["eval", "--dataset", str(BAR_DIR), "--planner", "symbolic", "--quiet", "--memory", str(m)]
    assert main(args + ["--record", "--world", "stochastic", "--runs", "5"]) == 0
    assert "recorded 53 plan(s) with 5 stochastic run(s) each" in capsys.readouterr().out
    counts = _counts(m)
    assert (counts["plans"], counts["executions"], counts["runs"]) == (53, 53, 265)
    report = tmp_path / "e.json"
    assert main(args + ["--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "goal(s) answered from memory" in out
    tasks = json.loads(report.read_text())["tasks"]
    assert all(t["verdict"] != "invalid" for t in tasks.values())
    assert sum(t["stats"]["memory_hits"] for t in tasks.values()) > sum(
        t["stats"]["memory_misses"] for t in tasks.values()
    )
    assert _counts(m) == counts  # read-only without --record


def test_execute_record_credits_the_plan_with_the_same_steps(tmp_path, capsys):
    m, plan = tmp_path / "m.sqlite", tmp_path / "p.jsonl"
    assert (
        main(
            [
                "plan",
                "iron_pickaxe",
                "--planner",
                "symbolic",
                "--memory",
                str(m),
                "--record",
                "--format",
                "bar",
                "-o",
                str(plan),
            ]
        )
        == 0
    )
    assert _counts(m)["runs"] == 0
    assert main(["execute", str(plan), "--memory", str(m), "--record", "--runs", "7"]) == 0
    assert "recorded the runs of 1 of 1 plan(s)" in capsys.readouterr().err
    counts = _counts(m)
    assert (counts["plans"], counts["executions"], counts["runs"]) == (1, 1, 7)
    other = tmp_path / "other.jsonl"
    assert main(["plan", "stick", "--planner", "symbolic", "--format", "bar", "-o", str(other)]) == 0
    assert main(["execute", str(other), "--memory", str(m), "--record", "--runs", "3"]) == 0
    assert "no plan in the memory has these steps" in capsys.readouterr().err
    assert _counts(m)["runs"] == 7


def test_environment_names_the_memory_and_no_memory_ignores_it(tmp_path, capsys, monkeypatch):
    m = tmp_path / "env.sqlite"
    monkeypatch.setenv("BARSYM_MEMORY", str(m))
    assert main(["plan", "stone_pickaxe", "--planner", "symbolic", "--record"]) == 0
    assert _counts(m)["plans"] == 1
    assert "memory: 0 goal(s) answered from memory" in capsys.readouterr().out
    assert main(["plan", "stone_pickaxe", "--planner", "symbolic", "--no-memory"]) == 0
    assert "memory:" not in capsys.readouterr().out
    assert main(["plan", "stone_pickaxe", "--planner", "symbolic", "--no-memory", "--record"]) == 2
    assert "--no-memory cannot be combined" in capsys.readouterr().err


def _immutable(path):
    """Make ``path`` unwritable even for root (chattr +i); False where the file system cannot."""
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


COMMANDS = {
    "plan": lambda m: ["plan", "stick", "--planner", "symbolic", "--memory", str(m), "--record"],
    "eval": lambda m: ["eval", "--dataset", str(BAR_DIR), "--planner", "symbolic", "--memory", str(m), "--record"],
    "execute": lambda m: ["execute", str(BAR_DIR / "stone" / "stone_pickaxe.jsonl"), "--memory", str(m), "--record"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", ["folder", "through_a_file", "read_only", "unreadable"])
def test_unusable_memory_with_record_is_one_line_exit_2_and_unchanged(tmp_path, capsys, command, kind):
    m = tmp_path / "m.sqlite"
    if kind == "folder":
        m.mkdir()
    elif kind == "through_a_file":
        (tmp_path / "f").write_text("a file, not a folder\n")
        m = tmp_path / "f" / "m.sqlite"
    else:
        MemoryStore(m).close()
        if kind == "unreadable":
            if os.geteuid() == 0:
                pytest.skip("root reads any file")
            m.chmod(0o000)
        elif os.geteuid() != 0:
            m.chmod(0o444)
        elif not _immutable(m):
            pytest.skip("cannot make a file read-only for root here")
    before = m.read_bytes() if m.is_file() and kind != "unreadable" else None
    try:
        assert main(COMMANDS[command](m)) == 2
    finally:
        if kind == "read_only" and os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(m)], check=False)
        if kind == "unreadable":
            m.chmod(0o600)
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("barsym: error: memory")
    if before is not None:
        assert m.read_bytes() == before


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_build_draws_a_bar_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    from barsym.commands import progress_line as progress_bar

    m = tmp_path / "m.sqlite"
    build = ["memory", "build", "--memory", str(m), "--dataset", str(BAR_DIR), "--limit", "3", "--runs", "5"]
    assert main(build) == 0
    piped = capsys.readouterr()
    assert "\r" not in piped.err and "\033" not in piped.err and "#" not in piped.err
    assert piped.err.count("\n") == 3 and "[3/3]" in piped.err  # one line per task, as before
    terminal = _Terminal()
    monkeypatch.setattr(progress_bar.sys, "stderr", terminal)
    monkeypatch.setattr(progress_bar, "REFRESH", None)  # drawn at each task, not by rich's thread as well
    assert main(build) == 0
    assert "memory build" in terminal.text and "1/3" in terminal.text and "3/3" in terminal.text
    assert terminal.text.endswith("\033[2K")  # wiped at the end (rich's erase-line)
    assert "runs succeeded" not in terminal.text  # the bar replaces the per-task lines
