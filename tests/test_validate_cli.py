"""``barsym validate`` end to end: verdicts, JSON shape, exit codes, bad input."""

from __future__ import annotations

import io
import json
import sys

import pytest

from barsym.cli import main
from cli_run import run
from testdata import EXPERT_FILES


def test_all_expert_plans_get_a_verdict(capsys):
    code, out, _ = run(capsys, "validate", *map(str, EXPERT_FILES))
    assert code == 1  # note_block's expert plan is invalid
    assert out.strip().splitlines()[-1] == "summary: 53 plan(s): 43 valid, 9 valid with waste, 1 invalid"
    assert "note_block.jsonl: INVALID at step 2" in out
    assert "state before: layer 0 (surface); inventory: 5 logs" in out


def test_json_output_shape(capsys):
    files = [str(p) for p in EXPERT_FILES if p.stem in ("note_block", "stone_axe", "iron_pickaxe")]
    code, out, _ = run(capsys, "validate", "--json", *files)
    records = {r["file"].rsplit("/", 1)[1]: r for r in json.loads(out)}
    assert code == 1
    bad = records["note_block.jsonl"]
    assert bad["valid"] is False and bad["verdict"] == "invalid"
    assert bad["errors"][0] == {
        "step": 2,
        "code": "missing_ingredient",
        "item": "logs",
        "needed": 6,
        "had": 5,
        "message": bad["errors"][0]["message"],
    }
    # the rollout goes on past step 2: every later failure is a knock-on of it (it made no planks)
    later = bad["errors"][1:]
    assert later and all(e["step"] > 2 and e.get("caused_by") for e in later)
    assert bad["failed_steps"][0] == 2
    assert bad["state_before_failure"] == {"layer": 0, "inventory": {"logs": 5}}
    waste = records["stone_axe.jsonl"]
    assert waste["valid"] is True and waste["warnings"][0] == {
        "step": 2,
        "code": "waste",
        "item": "planks",
        "count": 2,
        "message": waste["warnings"][0]["message"],
    }
    assert records["iron_pickaxe.jsonl"]["verdict"] == "valid"


def test_goal_option_and_goal_not_reached(capsys, tmp_path):
    plan = tmp_path / "p.jsonl"
    plan.write_text(
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}\n{"type": "craft", "obj_name": "planks", "obj_num": 4}\n'
    )
    assert run(capsys, "validate", str(plan))[0] == 0
    code, out, _ = run(capsys, "validate", "--goal", "stick", str(plan))
    assert code == 1 and "goal_not_reached" in out
    code, _, err = run(capsys, "validate", "--goal", "stik", str(plan))
    assert code == 2 and "did you mean stick" in err
    only_craft = tmp_path / "c.jsonl"
    only_craft.write_text('{"type": "craft", "obj_name": "planks", "obj_num": 8}\n')
    assert run(capsys, "validate", str(only_craft))[0] == 1
    assert (
        run(capsys, "validate", "--start", "logs=2", "--goal", "planks", "--goal-count", "8", str(only_craft))[0] == 0
    )


def test_stdin(capsys, monkeypatch):
    text = (EXPERT_FILES[0]).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, _ = run(capsys, "validate", "-")
    assert code == 0 and out.startswith("<stdin>: valid")


@pytest.mark.parametrize(
    "content,fragment",
    [
        (b'{"type": "mine", "obj_name": "logs", "obj_num": 4}\n{"type": ', ":2: malformed JSON"),
        (b"", "empty plan"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary file"),
        (b'{"type": "mine", "obj_name": "logs", "obj_num": 0}', "'obj_num' must be from 1"),
        (b'{"type": "mine", "obj_name": "logs", "obj_num": 99999999}', "'obj_num' must be from 1"),
        (b'{"type": "teleport", "obj_name": "logs", "obj_num": 1}', "unknown step type 'teleport'"),
    ],
)
def test_unusable_input_exits_2_without_traceback(capsys, tmp_path, content, fragment):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    code, out, err = run(capsys, "validate", str(bad), str(EXPERT_FILES[0]))
    assert code == 2 and fragment in err and "Traceback" not in err
    assert "1 unusable" in out  # the good file is still validated


def test_plan_problems_are_verdicts_not_input_errors(capsys, tmp_path):
    plan = tmp_path / "p.jsonl"
    plan.write_text('{"type": "craft", "obj_name": "diamond_pikaxe", "obj_num": 1}\n')
    code, out, _ = run(capsys, "validate", str(plan))
    assert code == 1 and "unknown_item" in out and "did you mean diamond_pickaxe" in out


def test_missing_file_and_bad_options(capsys, tmp_path):
    code, out, err = run(capsys, "validate", "--json", str(tmp_path / "nope.jsonl"))
    assert code == 2 and json.loads(out)[0]["errors"][0]["code"] == "bad_input"
    with pytest.raises(SystemExit) as info:
        main(["validate", "--frobnicate", str(EXPERT_FILES[0])])
    assert info.value.code == 2
    assert run(capsys, "validate", "--start", "logs", str(EXPERT_FILES[0]))[0] == 2
    assert run(capsys, "validate", "--goal-count", "0", str(EXPERT_FILES[0]))[0] == 2


def test_graph_command(capsys, tmp_path):
    code, out, err = run(capsys, "graph", "diamond_pickaxe", "--format", "mermaid")
    assert code == 0 and out.startswith("flowchart LR") and "mine diamond" in out
    assert "can be obtained" in err
    target = tmp_path / "g.dot"
    assert run(capsys, "graph", "bucket", "-o", str(target))[0] == 0
    assert target.read_text().startswith('digraph "bucket"')
    code, _, err = run(capsys, "graph", "netherite_ingot")
    assert code == 1 and "needs ancient_debris" in err  # unreachable: the graph is written, exit 1 as plan
    code, _, err = run(capsys, "graph", "diamnod")
    assert code == 2 and "did you mean diamond" in err


def test_shipped_examples_validate_with_no_warning(capsys):
    """``barsym validate examples/*.jsonl`` (the README's light-install command): every plan valid, not one
    warning; the plans barsym flags on purpose are in examples/flawed/, each flagged for its one reason."""
    from testdata import REPO

    shipped = sorted(str(p) for p in (REPO / "examples").glob("*.jsonl"))
    code, out, err = run(capsys, "validate", "--format", "json", *shipped)
    records = json.loads(out)
    assert code == 0 and err == "" and len(records) == len(shipped) >= 2
    assert [(r["verdict"], r["warnings"]) for r in records] == [("valid", [])] * len(shipped)
    flawed = {p.name: p for p in (REPO / "examples" / "flawed").glob("*.jsonl")}
    code, out, _ = run(capsys, "validate", "--format", "json", *map(str, flawed.values()))
    found = {r["file"].rsplit("/", 1)[1]: r for r in json.loads(out)}
    assert code == 1
    assert found["note_block_expert.jsonl"]["errors"][0]["code"] == "missing_ingredient"
    one = found["cobblestone_one_pickaxe.jsonl"]
    assert one["verdict"] == "valid" and [w["code"] for w in one["warnings"]] == ["tool_wears_out"]


def test_a_tool_wear_warning_is_shown_for_a_valid_plan(capsys):
    """A valid plan whose only warning is a tool wearing out says so in the text too (it was dropped)."""
    from testdata import REPO

    code, out, _ = run(capsys, "validate", REPO / "examples" / "flawed" / "cobblestone_one_pickaxe.jsonl")
    assert code == 0 and ": valid (7 steps, goal 70 cobblestone)" in out
    assert "warning [tool_wears_out] wooden_pickaxe wears out here" in out


def test_a_spare_tool_the_wear_needs_is_not_waste(kb):
    from barsym.bar_io import parse_plan
    from barsym.validation import Validator

    lines = [
        "mine 5 logs",
        "craft 20 planks",
        "craft 8 stick",
        "craft 1 crafting_table",
        "craft {n} wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "mine 70 cobblestone with wooden_pickaxe",
    ]
    codes = {}
    for n in (2, 3):
        result = Validator(kb).validate(parse_plan("\n".join(lines).format(n=n), "p"))
        assert result.valid
        codes[n] = [(w.code, w.item, w.count) for w in result.warnings if w.item == "wooden_pickaxe"]
    assert codes[2] == []  # the wear uses up two copies: both are used
    assert codes[3] == [("waste", "wooden_pickaxe", 1)]  # a third is waste


def test_the_default_goal_is_the_last_steps_whole_count(kb):
    from barsym.bar_io import parse_plan

    plan = parse_plan("mine 3 logs\ncraft 12 planks\ndig down\n", "p")
    assert (plan.default_goal().item, plan.default_goal().count) == ("planks", 12)
