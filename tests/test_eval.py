"""``barsym eval``: BAR's table on the tech tree, JSON output, and bad datasets."""

from __future__ import annotations

import json
import shutil

import pytest

from cli_run import run
from testdata import BAR_DIR


def test_table_and_json(capsys, tmp_path):
    report = tmp_path / "eval.json"
    code, out, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--json", report)
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("group"))
    assert lines[header].split()[:5] == ["group", "tasks", "Acc", "F1", "ED"]
    rows = [line.split()[0] for line in lines[header + 1 : header + 7]]
    assert sorted(rows) == sorted(["stone", "iron", "gold", "diamond", "redstone", "all"])
    assert "redstone/note_block: differs" in out and "the expert plan is invalid" in out
    data = json.loads(report.read_text())
    assert set(data) >= {"groups", "overall", "tasks"}
    assert set(data["groups"]) == {"stone", "iron", "gold", "diamond", "redstone"}
    for entry in list(data["groups"].values()) + [data["overall"]]:
        assert {"accuracy", "f1", "edit_distance"} <= set(entry)
    assert data["groups"]["diamond"]["accuracy"] == 100.0
    task = data["tasks"]["diamond/diamond_pickaxe"]
    assert task["matches_expert"] and task["verdict"] == "valid" and "seconds" in task and "stats" in task
    note = data["tasks"]["redstone/note_block"]
    assert note["expert_verdict"] == "invalid" and note["why"].startswith("the expert plan is invalid")


def test_task_list_without_references(capsys, tmp_path):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [
                {"task": "t1", "group": "MT1", "object": "wooden_slab"},
                {"task": "t2", "group": "MT4", "object": "stone_stairs"},
                {"task": "t3", "group": "MT4", "object": "beacon"},
            ]
        )
    )
    code, out, _ = run(capsys, "eval", "--dataset", tasks, "--dialect", "deps", "--planner", "symbolic")
    assert code == 0
    assert any(line.split()[:6] == ["all", "3", "2", "2", "1", "0"] for line in out.splitlines())


def bad_copy(tmp_path, damage):
    target = tmp_path / "bar"
    shutil.copytree(BAR_DIR, target)
    damage(target)
    return target


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda d: (d / "tasks.json").unlink(), "no tasks.json"),
        (lambda d: (d / "tasks.json").write_text("{not json"), "not valid JSON"),
        (lambda d: (d / "tasks.json").write_text("[1, 2]"), "expected an object mapping group names"),
        (lambda d: (d / "iron" / "bucket.jsonl").unlink(), "expert plan not found"),
        (lambda d: (d / "iron" / "bucket.jsonl").write_text('{"type": "craft"\n'), "malformed JSON"),
        (
            lambda d: (d / "tasks.json").write_text('{"stone": {"x": {"obj_name": "unobtainium", "obj_num": 1}}}'),
            "unknown item 'unobtainium'",
        ),
    ],
)
def test_malformed_dataset_is_one_line_exit_2(capsys, tmp_path, damage, words):
    code, out, err = run(capsys, "eval", "--dataset", bad_copy(tmp_path, damage))
    assert code == 2 and out == "" and words in err and err.count("\n") == 1 and "Traceback" not in err


def test_missing_dataset_and_bad_options(capsys, tmp_path):
    code, _, err = run(capsys, "eval", "--dataset", tmp_path / "nowhere")
    assert code == 2 and "not found" in err and err.count("\n") == 1
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "nope")
    assert code == 2 and "unknown planner" in err
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--dialect", "klingon")
    assert code == 2 and "unknown dialect" in err
