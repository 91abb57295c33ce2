"""``barsym score`` and ``barsym repair``: output, exit codes, and bad input (one line, exit 2).

Everything here runs without a model (``--scores simulator``, the symbolic
repairer); the model's paths are covered with the scripted fake in
test_consistency_repair.py and with the real GGUF in test_consistency_real.py.
"""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import format_plan, parse_plan, read_plan
from barsym.model import Plan, StepType
from cli_run import run
from testdata import EXPERT_FILES

IRON = read_plan(next(p for p in EXPERT_FILES if p.stem == "iron_pickaxe"))
DIG = next(i for i, s in enumerate(IRON.steps) if s.type is StepType.DIG_DOWN)


@pytest.fixture
def faulty(tmp_path):
    path = tmp_path / "no_dig.jsonl"
    path.write_text(format_plan(Plan(steps=IRON.steps[:DIG] + IRON.steps[DIG + 1 :])), encoding="utf-8")
    return path


@pytest.fixture
def valid(tmp_path):
    path = tmp_path / "iron_pickaxe.jsonl"
    path.write_text(format_plan(IRON), encoding="utf-8")
    return path


def test_repair_shows_a_diff_against_the_plan(capsys, faulty):
    code, out, err = run(capsys, "repair", str(faulty))
    assert code == 0, err
    assert f"{faulty}: invalid -> valid" in out
    added = [line for line in out.splitlines() if line.lstrip().startswith("+")]
    assert len(added) == 1 and "dig down with wooden_pickaxe" in added[0] and "[repaired-symbolic]" in added[0]
    assert not [line for line in out.splitlines() if line.lstrip().startswith("- ")]
    assert "1 step(s) repaired" in out


def test_repair_json_has_the_fields_the_issue_lists(capsys, faulty, valid):
    code, out, err = run(capsys, "repair", str(faulty), str(valid), "--format", "json")
    assert code == 0, err
    records = json.loads(out)
    assert [r["file"] for r in records] == [str(faulty), str(valid)]
    first, second = records
    for key in ("file", "valid_before", "valid_after", "scores", "anchors", "steps", "provenance"):
        assert key in first
    assert first["valid_before"] is False and first["valid_after"] is True
    assert set(first["scores"][0]) >= {"step", "simulator", "llm"} and first["scores"][0]["llm"] is None
    assert first["edit"].startswith("insert dig down with wooden_pickaxe") and first["anchors"] == []  # one step
    assert len(first["steps"]) == len(first["provenance"]) == len(IRON)
    assert first["provenance"].count("repaired-symbolic") == 1
    assert parse_plan("".join(json.dumps(s) + "\n" for s in first["steps"])).steps == IRON.steps
    assert second["valid_before"] and second["anchors"] == [] and set(second["provenance"]) == {"kept"}


def test_repair_bar_format_is_a_plan(capsys, faulty):
    code, out, _ = run(capsys, "repair", str(faulty), "--format", "bar")
    assert code == 0 and parse_plan(out).steps == IRON.steps


def test_repair_with_the_sliding_window(capsys, faulty):
    code, out, err = run(
        capsys, "repair", str(faulty), "--anchors", "sliding-window", "--k", "2", "--rounds", "6", "--format", "json"
    )
    records = json.loads(out)
    assert code in (0, 1), err
    assert records[0]["rounds"] and all(r["anchors"] for r in records[0]["rounds"])


def test_score_prints_both_sources_and_anchors(capsys, faulty):
    code, out, err = run(capsys, "score", str(faulty), "--scores", "simulator")
    assert code == 0, err
    assert "anchors from simulator scores:" in out and "fails here (state: wrong_layer)" in out
    code, out, _ = run(capsys, "score", str(faulty), "--scores", "simulator", "--json")
    data = json.loads(out)
    plan = data["plans"][0]
    assert data["crosscheck"] is None
    assert [s["step"] for s in plan["scores"]] == list(range(1, len(IRON)))
    assert plan["scores"][DIG]["simulator"] == 2 and plan["anchors"]["simulator"][0][0] <= DIG + 1
    assert plan["windows"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--t", "0"), "--t must be from 1 to 10"),
        (("--t", "11"), "--t must be from 1 to 10"),
        (("--t", "five"), "--t must be a whole number"),
        (("--k", "0"), "--k must be from 1"),
        (("--repair-rounds", "0"), "--repair-rounds must be from 1"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(capsys, faulty, argv, message):
    for command in ("repair", "score"):
        if command == "score" and argv[0] == "--repair-rounds":
            continue
        extra = ("--scores", "simulator") if command == "score" else ()
        code, out, err = run(capsys, command, str(faulty), *argv, *extra)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_empty_file_is_one_line_and_exit_2(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    for command in (("repair",), ("score", "--scores", "simulator")):
        code, out, err = run(capsys, command[0], str(empty), *command[1:])
        assert code == 2 and "empty plan" in err and len(err.strip().splitlines()) == 1


def test_a_goal_nothing_makes_is_an_honest_cannot_repair(capsys, faulty):
    code, out, err = run(capsys, "repair", str(faulty), "--goal", "beacon")
    assert code == 1 and "cannot repair" in err and "nether_star" in err
    code, out, err = run(capsys, "repair", str(faulty), "--goal", "beacon", "--format", "json")
    assert code == 1 and "nether_star" in json.loads(out)[0]["cannot_repair"]


def test_bar_format_takes_one_file(capsys, faulty, valid):
    code, _, err = run(capsys, "repair", str(faulty), str(valid), "--format", "bar")
    assert code == 2 and "one file" in err


def test_an_unknown_goal_is_exit_2(capsys, faulty):
    code, _, err = run(capsys, "repair", str(faulty), "--goal", "unobtainium")
    assert code == 2 and "--goal" in err


def test_plan_takes_consistency_and_its_options(capsys):
    code, out, err = run(capsys, "plan", "stone_pickaxe", "--planner", "symbolic", "--consistency")
    assert code == 0, err
    assert "[symbolic, kept]" in out and "state consistency: the plan was valid" in out
    code, _, err = run(capsys, "plan", "stone_pickaxe", "--planner", "symbolic", "--consistency", "--t", "12")
    assert code == 2 and "--t must be from 1 to 10" in err
