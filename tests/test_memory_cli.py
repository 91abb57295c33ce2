"""``barsym memory``: build, stats, export/import, and bad input as one line with exit status 2."""

from __future__ import annotations

import json

import pytest

from barsym.cli import main
from testdata import BAR_DIR

pytestmark = pytest.mark.skipif(not BAR_DIR.exists(), reason="BAR dataset not available")


def test_build_stats_export_import(tmp_path, capsys):
    m = tmp_path / "m.sqlite"
    assert main(["memory", "build", "--memory", str(m), "--dataset", str(BAR_DIR), "--limit", "3", "--runs", "5"]) == 0
    capsys.readouterr()
    assert main(["memory", "stats", "--memory", str(m)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["plans"] == 3 and stats["runs"] == 15
    out = tmp_path / "m.jsonl"
    assert main(["memory", "export", str(out), "--memory", str(m)]) == 0
    m2 = tmp_path / "m2.sqlite"
    assert main(["memory", "import", str(out), "--memory", str(m2)]) == 0
    capsys.readouterr()
    assert main(["memory", "stats", "--memory", str(m2)]) == 0
    assert json.loads(capsys.readouterr().out) == stats


@pytest.mark.parametrize("kind", ["missing", "folder", "text"])
def test_bad_memory_path_is_one_line_exit_2(tmp_path, capsys, kind):
    path = tmp_path / "m.sqlite"
    if kind == "folder":
        path.mkdir()
    elif kind == "text":
        path.write_text("not a database\n")
    assert main(["memory", "stats", "--memory", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("barsym: error:")
    if kind == "text":
        assert path.read_text() == "not a database\n"


def test_plan_with_warm_memory_and_record(tmp_path, capsys):
    m = tmp_path / "m.sqlite"
    assert main(["plan", "iron_pickaxe", "--planner", "symbolic", "--memory", str(m), "--record"]) == 0
    capsys.readouterr()
    assert main(["memory", "stats", "--memory", str(m)]) == 0
    assert json.loads(capsys.readouterr().out)["plans"] == 1
    assert main(["memory", "build", "--memory", str(m), "--dataset", str(BAR_DIR), "--runs", "5"]) == 0
    capsys.readouterr()
    assert main(["plan", "diamond_pickaxe", "--planner", "symbolic", "--memory", str(m), "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["memory_misses"] == 0 and stats["memory_hits"] > 0


def test_plan_record_bad_memory_is_one_line_exit_2(tmp_path, capsys):
    assert main(["plan", "stick", "--planner", "symbolic", "--record"]) == 2
    assert "--record needs --memory" in capsys.readouterr().err
    folder = tmp_path / "d"
    folder.mkdir()
    assert main(["plan", "stick", "--planner", "symbolic", "--memory", str(folder), "--record"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "folder" in err


def test_import_is_all_or_none(tmp_path, capsys):
    m, out = tmp_path / "m.sqlite", tmp_path / "m.jsonl"
    assert main(["plan", "iron_pickaxe", "--planner", "symbolic", "--memory", str(m), "--record"]) == 0
    assert main(["memory", "export", str(out), "--memory", str(m)]) == 0
    good = out.read_text().strip()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n" + good + "\n" + json.dumps({"task": "x"}) + "\n")
    target = tmp_path / "t.sqlite"
    capsys.readouterr()
    assert main(["memory", "import", str(bad), "--memory", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "record 3" in err and "nothing imported" in err
    assert main(["memory", "stats", "--memory", str(target)]) == 0
    assert json.loads(capsys.readouterr().out)["plans"] == 0  # the two good records before it were not kept
