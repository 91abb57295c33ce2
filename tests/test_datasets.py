"""The bundled task sets: named in ``barsym eval --dataset``, listed by ``barsym datasets``, in the wheel.

The counts asserted are the task sets' own (BAR's release: 53 tasks; DEPS'
list: 70; Plancraft's train split: 1145), each checked against what
:func:`load_dataset` reads from the packaged copy.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from barsym.datasets import BUNDLED
from barsym.eval import load_dataset, resolve_dataset
from cli_run import one_line, run
from testdata import BAR_DIR, DATASETS, REPO

EXPECTED = {"bar": 53, "deps": 70, "plancraft-train": 1145}


def test_the_listing_names_every_set_with_count_source_and_licence(capsys):
    code, out, err = run(capsys, "datasets", "--format", "json")
    assert code == 0 and err == ""
    records = {r["name"]: r for r in json.loads(out)}
    assert {name: r["tasks"] for name, r in records.items()} == EXPECTED
    assert records["bar"]["licence"] == "Apache-2.0" and "SCUNLP/BAR" in records["bar"]["source"]
    assert records["plancraft-train"]["licence"] == "MIT"
    assert records["deps"]["licence"].startswith("none stated") and records["deps"]["dialect"] == "deps"
    assert {r["minecraft"] for r in records.values()} == {"1.16.5"}  # the version the tasks are written for
    code, text, _ = run(capsys, "datasets")
    assert code == 0
    for name, count in EXPECTED.items():
        assert f"{name} ({count} tasks, Minecraft 1.16.5)" in text


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_set_loads_by_name_with_its_note_and_licence_beside_it(kb, name):
    tasks = load_dataset(name, kb)
    assert len(tasks) == EXPECTED[name] == BUNDLED[name].count()
    assert len({t.key for t in tasks}) == len(tasks)
    home = BUNDLED[name].home
    assert "Licence:" in (home / "SOURCE.md").read_text(encoding="utf-8")
    assert (BUNDLED[name].licence_file is not None) == (name != "deps")  # DEPS' release states no licence


def test_bar_keeps_its_expert_plans_and_deps_its_dialect(kb):
    bar = load_dataset("bar", kb)
    assert all(t.reference is not None and len(t.reference) > 0 for t in bar)
    deps = {t.name: t for t in load_dataset("deps", kb)}
    assert deps["obtain_wooden_slab"].goal.item == "oak_slab" and deps["obtain_wooden_slab"].asked == "wooden_slab"


def test_a_name_and_the_path_of_its_files_evaluate_alike(capsys):
    by_name = run(capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--quiet", "--groups", "gold")
    by_path = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--quiet", "--groups", "gold")
    assert by_name[0] == by_path[0] == 0
    # the first line names the dataset as given; wall times differ from run to run
    table = lambda out: [line for line in out.splitlines()[1:] if not line.startswith("wall time")]  # noqa: E731
    assert table(by_name[1]) == table(by_path[1]) and "gold" in by_name[1]


def test_an_unknown_name_says_which_names_exist(capsys):
    code, _, err = run(capsys, "eval", "--dataset", "barr", "--planner", "symbolic")
    assert code == 2 and one_line(err)
    assert "bar, deps, plancraft-train" in err


def test_a_folder_spelled_like_a_name_is_reached_with_a_path(kb, tmp_path, monkeypatch):
    """``bar`` is the bundled set; ``./bar`` (a str) or an existing ``Path('bar')`` is the folder."""
    import shutil
    from pathlib import Path

    shutil.copytree(BAR_DIR / "gold", tmp_path / "bar" / "gold")
    gold = {"gold": json.loads((BAR_DIR / "tasks.json").read_text())["gold"]}
    (tmp_path / "bar" / "tasks.json").write_text(json.dumps(gold))
    monkeypatch.chdir(tmp_path)
    assert resolve_dataset("bar")[0] == BUNDLED["bar"].path
    assert len(load_dataset("./bar", kb)) == 7 and len(load_dataset(Path("bar"), kb)) == 7
    assert len(load_dataset("bar", kb)) == 53


@pytest.mark.parametrize(
    "name, shared", [("bar", "bar_tech_tree"), ("deps", "deps_tasks.json"), ("plancraft-train", "plancraft/train.json")]
)
def test_the_packaged_copies_are_the_released_files(name, shared):
    """Byte for byte what the project's shared datasets hold (BAR's and Plancraft's as released)."""
    source = DATASETS / shared
    if not source.exists():
        pytest.skip(f"the shared datasets folder is not at {DATASETS} (set BARSYM_DATASETS); nothing to compare")
    packaged = BUNDLED[name].path
    if source.is_dir():
        files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
        assert files == sorted(
            p.relative_to(packaged) for p in packaged.rglob("*") if p.is_file() and p.name != "SOURCE.md"
        )
        assert all((source / f).read_bytes() == (packaged / f).read_bytes() for f in files)
    else:
        assert source.read_bytes() == packaged.read_bytes()


def test_the_wheel_carries_the_task_sets(tmp_path):
    """``pip wheel .`` (the build a user's pip makes) holds every data file, licence and note."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.skip(f"pip could not build a wheel here (no build backend reachable): {built.stderr[-300:]}")
    (wheel,) = tmp_path.glob("barsym-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name, dataset in BUNDLED.items():
        home = dataset.home
        expected = {
            f"barsym/datasets/{p.relative_to(home.parent).as_posix()}"
            for p in home.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert expected <= names, (name, sorted(expected - names)[:5])
    assert sum(n.startswith("barsym/datasets/bar/") and n.endswith(".jsonl") for n in names) == 53
