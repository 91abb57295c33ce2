"""Every outcome is a result: the typed results round-trip through plain data, and the JSON outputs of
``plan`` and ``repair`` carry status, reason and exit code for failures and refusals too."""

from __future__ import annotations

import json

import pytest

import barsym
from barsym.api import Planned
from barsym.consistency import RepairResult
from barsym.sim.execution import Execution
from barsym.validation import ValidationResult
from cli_run import one_line, run
from testdata import BAR_DIR, EXPERT_FILES

NOTE_BLOCK = BAR_DIR / "redstone" / "note_block.jsonl"  # BAR's expert plan that cannot run


def through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


@pytest.mark.parametrize("path", EXPERT_FILES[::6] + [NOTE_BLOCK], ids=lambda p: p.stem)
def test_validation_results_round_trip(path):
    result = barsym.validate(path)
    back = ValidationResult.from_dict(through_json(result.to_dict()))
    assert back.to_dict() == result.to_dict()
    assert (back.verdict, back.errors, back.warnings, back.trace, back.failed_step) == (
        result.verdict,
        result.errors,
        result.warnings,
        result.trace,
        result.failed_step,
    )


def test_a_planned_round_trips_and_validates_as_itself():
    planned = barsym.plan("iron_pickaxe", planner="symbolic", start={"stone_pickaxe": 1}, layer=1)
    back = Planned.from_dict(through_json(planned.to_dict()))
    assert back == planned and back.to_dict() == planned.to_dict() and back.result is None
    checked = barsym.validate(planned)  # its goal, its start state, its rules
    assert checked.valid and checked.goal == planned.goal and checked.trace[0] == planned.start
    assert barsym.validate(back).to_dict() == checked.to_dict()


def test_an_execution_round_trips_with_its_episodes():
    execution = barsym.execute(EXPERT_FILES[0], runs=40, seed=5)
    assert 0 < execution.successes  # a plan with failed runs too, or every path is not exercised
    data = through_json(execution.to_dict(episodes=True))
    back = Execution.from_dict(data)
    assert back.episodes == execution.episodes and back.plan.steps == execution.plan.steps
    assert back.to_dict(episodes=True) == data and back.description() == execution.description()
    with pytest.raises(ValueError, match="episodes=True"):
        Execution.from_dict(execution.to_dict())


@pytest.mark.parametrize(
    "text, repaired", [("craft 1 stone_pickaxe\n", True), ("mine 4 logs\ncraft 4 planks\n", False)]
)
def test_a_repair_round_trips(text, repaired):
    result = barsym.repair(text, goal="stone_pickaxe" if not repaired else None)
    assert isinstance(result, RepairResult)
    data = through_json(result.to_dict())
    back = RepairResult.from_dict(data)
    assert back.to_dict() == data and back.plan.steps == result.plan.steps and back.provenance == result.provenance
    assert (back.valid_before, back.valid_after, back.config, back.stats) == (
        result.valid_before,
        result.valid_after,
        result.config,
        result.stats,
    )


def test_plan_json_for_an_impossible_goal_is_a_result_on_stdout(capsys):
    code, out, err = run(capsys, "plan", "beacon", "--planner", "symbolic", "--format", "json")
    data = json.loads(out)
    assert code == 1 == data["exit_code"] and data["status"] == "no_plan" and data["kind"] == "unreachable"
    assert "nether_star" in data["reason"] and data["reason"] in err


@pytest.mark.parametrize("argv", [("stick", "--count", "0"), ("unobtainium",), ("stick", "--planner", "nope")])
def test_plan_json_for_refused_input_is_a_result_too(capsys, argv):
    code, out, err = run(capsys, "plan", *argv, "--format", "json")
    data = json.loads(out)
    assert code == 2 == data["exit_code"] and data["status"] == "refused" and one_line(err)
    assert data["reason"] in err


def test_plan_json_for_a_plan_says_planned(capsys):
    code, out, _ = run(capsys, "plan", "stick", "--planner", "symbolic", "--format", "json")
    data = json.loads(out)
    assert code == 0 and (data["status"], data["reason"], data["exit_code"]) == ("planned", None, 0)
    assert data["steps"]


def test_repair_json_gives_every_file_a_status(capsys, tmp_path):
    broken, stuck, garbage = tmp_path / "broken.txt", tmp_path / "stuck.txt", tmp_path / "garbage.txt"
    broken.write_text("craft 1 stone_pickaxe\n")
    stuck.write_text("mine 1 beacon\n")
    garbage.write_text("hello\n")
    code, out, _ = run(capsys, "repair", broken, EXPERT_FILES[0], garbage, "--format", "json")
    records = {r["file"]: r for r in json.loads(out)}
    assert code == 2
    assert (records[str(broken)]["status"], records[str(broken)]["exit_code"]) == ("repaired", 0)
    assert records[str(EXPERT_FILES[0])]["status"] in ("valid", "repaired")
    assert (records[str(garbage)]["status"], records[str(garbage)]["exit_code"]) == ("unusable", 2)
    assert "malformed JSON" in records[str(garbage)]["reason"]
    code, out, _ = run(capsys, "repair", stuck, "--format", "json")
    (record,) = json.loads(out)
    assert code == 1 and record["status"] in ("cannot_repair", "unrepaired") and record["exit_code"] == 1
    assert record["reason"]
    code, out, err = run(capsys, "repair", broken, "--format", "json", "--t", "99")
    assert code == 2 and json.loads(out) == {
        "status": "refused",
        "reason": err.strip().removeprefix("barsym: error: "),
        "exit_code": 2,
    }


@pytest.mark.parametrize(
    "argv",
    [
        ("eval", "--dataset", "no-such-set", "--planner", "symbolic"),  # a task set that is not there
        ("eval", "--dataset", "bar", "--planner", "symbolic", "--run", "{tmp}/run.txt"),  # not a run file
        ("parse", "{tmp}/empty.txt", "--llm-stand-in", "first"),  # no prose to parse
    ],
)
def test_eval_and_parse_json_for_refused_input_is_a_result_too(capsys, tmp_path, argv):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "run.txt").write_text("not a run file\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, *argv, "--format", "json")
    data = json.loads(out)
    assert code == 2 == data["exit_code"] and data["status"] == "refused" and one_line(err)
    assert data["reason"] in err
