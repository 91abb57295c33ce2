"""Issue 20, security 4: a dataset's task and group names are names, never paths out of its folder."""

from __future__ import annotations

import json

import pytest

from barsym.eval.dataset import DatasetError, load_dataset
from cli_run import one_line, run

SECRET_LINE = "TOP-SECRET the content of a file outside the dataset"


def _dataset(tmp_path, group: str, task: str):
    """BAR's layout in tmp/x/y/data with a file the name would reach planted where it points."""
    folder = tmp_path / "x" / "y" / "data"
    (folder / "g").mkdir(parents=True)
    (folder / "tasks.json").write_text(json.dumps({group: {task: {"obj_name": "stick", "obj_num": 1}}}))
    target = folder / group / f"{task}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(SECRET_LINE + "\n")
    return folder


HOSTILE = [
    ("g", "../../../secret2", "task"),
    ("g", "../secret2", "task"),
    ("g", "/etc/passwd_like", "task"),
    ("g", "sub\\..\\secret2", "task"),
    ("g", "..", "task"),
    ("..", "secret2", "group"),
    ("g/../..", "secret2", "group"),
    ("g", " stick", "task"),
]


@pytest.mark.parametrize("group, task, what", HOSTILE, ids=[f"{g}|{t}" for g, t, _ in HOSTILE])
def test_a_path_like_name_is_refused_in_one_line(tmp_path, capsys, kb, group, task, what):
    if task.startswith("/"):
        folder = tmp_path / "data"
        (folder / "g").mkdir(parents=True)
        (folder / "tasks.json").write_text(json.dumps({group: {task: {"obj_name": "stick", "obj_num": 1}}}))
    else:
        folder = _dataset(tmp_path, group, task)
    with pytest.raises(DatasetError, match=f"the {what} name .* is not a plain name"):
        load_dataset(folder, kb)
    code, out, err = run(capsys, "eval", "--planner", "symbolic", "--dataset", folder)
    assert code == 2 and one_line(err), err
    assert "TOP-SECRET" not in out + err and "not a plain name" in err


def test_plain_names_still_load(tmp_path, kb):
    folder = tmp_path / "data"
    (folder / "g").mkdir(parents=True)
    (folder / "tasks.json").write_text(json.dumps({"g": {"stick.v2": {"obj_name": "stick", "obj_num": 4}}}))
    (folder / "g" / "stick.v2.jsonl").write_text(
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}\n{"type": "craft", "obj_name": "planks", "obj_num": 4}\n'
        '{"type": "craft", "obj_name": "stick", "obj_num": 4}\n'
    )
    tasks = load_dataset(folder, kb)
    assert [t.key for t in tasks] == ["g/stick.v2"]
