"""``barsym plan``: formats, provenance, and one-line errors with exit 2 on bad input."""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import parse_plan
from barsym.model import Goal
from cli_run import run
from testdata import DEPS_FILE


def test_text_output_numbers_steps_with_provenance(capsys):
    code, out, err = run(capsys, "plan", "diamond_pickaxe", "--planner", "symbolic")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("Plan for 1 diamond_pickaxe: 16 steps, planner symbolic, validator: valid")
    assert lines[1].split()[:4] == ["1.", "mine", "4", "logs"] and "[symbolic]" in lines[1]
    assert "fuel for iron_ingot" in lines[2]


def test_bar_output_round_trips(capsys, validator, kb):
    code, out, _ = run(capsys, "plan", "boat", "--format", "bar", "--count", "2", "--planner", "symbolic")
    assert code == 0
    plan = parse_plan(out)
    assert str(plan.steps[-1]) == "craft 2 oak_boat"
    assert validator.validate(plan, goal=Goal(item="oak_boat", count=2)).valid


def test_json_output_has_plan_tree_and_provenance(capsys):
    code, out, _ = run(capsys, "plan", "iron_ingot", "--format", "json", "--planner", "symbolic")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "valid" and data["planner"] == "symbolic"
    assert data["steps"][-1]["obj_name"] == "iron_ingot" and data["steps"][-1]["provenance"] == ["symbolic"]
    assert data["tree"]["goal"] == {"item": "iron_ingot", "count": 1}
    assert data["tree"]["subgoals"][0]["goal"]["item"] == "iron_ore"


def test_output_file(capsys, tmp_path):
    target = tmp_path / "plan.jsonl"
    code, out, _ = run(capsys, "plan", "stick", "--format", "bar", "-o", str(target), "--planner", "symbolic")
    assert code == 0 and out == "" and len(target.read_text().splitlines()) == 3


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plan", "diamnd"], "unknown item 'diamnd'; did you mean diamond"),
        (["plan", "stick", "--count", "0"], "--count must be from 1 to"),
        (["plan", "stick", "--count", "-4"], "--count must be from 1 to"),
        (["plan", "stick", "--count", "many"], "--count must be a whole number"),
        (["plan", "stick", "--count", "2.5"], "--count must be a whole number"),
        (["plan", "stick", "--planner", "oracle"], "unknown planner 'oracle'"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "item, words",
    [
        ("nether_bricks", "cannot be obtained from overworld resources: needs"),
        ("saddle", "it is only found as loot, in chest loot"),
    ],
)
def test_unreachable_item_exit_1_with_reason(capsys, item, words):
    code, out, err = run(capsys, "plan", item, "--planner", "symbolic")
    assert code == 1 and out == "" and words in err and err.count("\n") == 1


def test_climbing_back_up_is_planned_where_a_goal_needs_it(capsys):
    code, out, _ = run(capsys, "plan", "mossy_stone_bricks", "--planner", "symbolic", "--format", "bar")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and {"type": "special", "obj_name": "climb up", "obj_num": None, "tool": None} in records


def test_every_deps_task_through_the_cli(capsys, kb, validator):
    """All 70 DEPS tasks (old names via the deps dialect, mob drops via kill steps) plan valid."""
    tasks = json.loads(DEPS_FILE.read_text())
    for task in tasks:
        code, out, err = run(
            capsys, "plan", task["object"], "--dialect", "deps", "--format", "bar", "--planner", "symbolic"
        )
        assert code == 0, (task, err)
        goal = Goal(item=kb.resolve(task["object"], dialect="deps"))
        assert validator.validate(parse_plan(out), goal=goal).verdict.value == "valid", task


@pytest.mark.parametrize("planner", ["symbolic", "bar"])
def test_plan_validates_its_plan_once(capsys, monkeypatch, planner):
    """The planner's own validation is what ``barsym plan`` reports: the plan is not validated twice (issue 36)."""
    from barsym.validation import Validator

    calls = []
    real = Validator.validate

    def counted(self, plan, *args, **kwargs):
        calls.append(len(plan.steps))
        return real(self, plan, *args, **kwargs)

    monkeypatch.setattr(Validator, "validate", counted)
    extra = ["--llm-stand-in", "copy-facts"] if planner == "bar" else []
    code, out, _ = run(capsys, "plan", "stone_pickaxe", "--planner", planner, *extra)
    assert code == 0 and "craft 1 stone_pickaxe" in out
    assert len(calls) == 1 and calls[0] >= 8


@pytest.mark.parametrize(
    "argv, named",
    [
        (["plan"], "the following arguments are required: item (barsym plan -h shows the usage)"),
        (["plan", "stick", "--bogus"], "unrecognized arguments: --bogus (barsym plan -h shows the usage)"),
        ([], "the following arguments are required: COMMAND (barsym -h shows the usage)"),
    ],
)
def test_a_missing_or_unknown_argument_is_one_line(capsys, argv, named):
    """The README's rule holds for argparse's own errors too: ``barsym plan`` alone printed 17 lines of usage."""
    with pytest.raises(SystemExit) as exited:
        run(capsys, *argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err == f"barsym: error: {named}\n"
