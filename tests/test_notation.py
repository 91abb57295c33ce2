"""Plans in barsym's own notation (``mine 4 logs`` lines, what ``barsym plan`` prints) read like BAR's JSONL.

One reader (:func:`barsym.bar_io.step_from_text`) serves plan files and the
forward planners' replies; these tests hold it to ``str(Step)``, its writer.
"""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import PlanFormatError, parse_plan, read_plan
from barsym.model import Step, StepType
from barsym.reasoning.grammars.forward_plans import parse_step
from cli_run import one_line, run
from testdata import EXPERT_FILES


def notation(steps) -> str:
    return "".join(f"{step}\n" for step in steps)


def test_every_expert_plan_reads_back_from_its_notation():
    for path in EXPERT_FILES:
        plan = read_plan(path)
        assert parse_plan(notation(plan.steps), "x").steps == plan.steps, path


@pytest.mark.parametrize("item", ["diamond_pickaxe", "mossy_stone_bricks", "bucket", "cooked_beef"])
def test_what_plan_prints_validates_as_the_same_plan(capsys, tmp_path, item):
    code, text, _ = run(capsys, "plan", item, "--planner", "symbolic")
    assert code == 0
    code, bar, _ = run(capsys, "plan", item, "--planner", "symbolic", "--format", "bar")
    listing = tmp_path / "plan.txt"
    listing.write_text(text)
    assert parse_plan(text, "plan.txt").steps == parse_plan(bar, "plan.jsonl").steps
    code, out, err = run(capsys, "validate", listing, "--goal", item)
    assert code == 0 and err == "" and out.startswith(f"{listing}: valid")


def test_bare_lines_numbering_comments_and_moves():
    text = "# a plan by hand\n1. mine 4 logs\n2) craft 4 planks.\n\ndig down with wooden_pickaxe\nclimb up\n"
    steps = parse_plan(text, "hand.txt").steps
    assert steps == (
        Step(type=StepType.MINE, item="logs", count=4),
        Step(type=StepType.CRAFT, item="planks", count=4),
        Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe"),
        Step(type=StepType.CLIMB_UP),
    )


def test_a_line_that_is_no_step_names_its_line_and_exits_2(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("mine 4 logs\nteleport 1 diamond\n")
    with pytest.raises(PlanFormatError, match=r"bad.txt:2: unknown action 'teleport'"):
        read_plan(bad)
    code, _, err = run(capsys, "validate", bad)
    assert code == 2 and one_line(err) and "bad.txt:2" in err and "`mine 4 logs`" in err


def test_unknown_items_are_the_validators_finding_not_a_format_error(capsys, tmp_path):
    plan = tmp_path / "p.txt"
    plan.write_text("mine 4 logs\ncraft 1 unobtainium\n")
    code, out, _ = run(capsys, "validate", plan, "--json")
    assert code == 1 and json.loads(out)[0]["verdict"] == "invalid"


def test_neither_json_nor_notation_says_both_are_accepted(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello there\n")
    code, _, err = run(capsys, "validate", bad)
    assert code == 2 and one_line(err) and "malformed JSON" in err and "`mine 4 logs`" in err


def test_the_forward_planners_reader_is_the_same_and_checks_names(kb):
    assert (
        parse_step("3. mine 3 iron_ore with stone_pickaxe", kb)
        == parse_plan("mine 3 iron_ore with stone_pickaxe").steps[0]
    )
    with pytest.raises(ValueError, match="unknown item 'unobtainium'"):
        parse_step("craft 1 unobtainium", kb)
