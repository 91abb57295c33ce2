"""BAR JSON Lines reader/writer: exact round-trips and precise format errors."""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import PlanFormatError, format_plan, parse_plan, read_plan
from barsym.model import MAX_COUNT, StepType
from testdata import EXPERT_FILES


def _normalised(record: dict) -> dict:
    return {**record, "tool": record.get("tool")}  # absent tool == null tool


def test_there_are_53_expert_plans():
    assert len(EXPERT_FILES) == 53


@pytest.mark.parametrize("path", EXPERT_FILES, ids=lambda p: p.stem)
def test_round_trip_is_exact(path):
    original = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    plan = read_plan(path)
    written = [json.loads(line) for line in format_plan(plan).splitlines()]
    assert [_normalised(r) for r in written] == [_normalised(r) for r in original]
    assert parse_plan(format_plan(plan)).steps == plan.steps


def test_dig_down_and_kill_steps():
    plan = parse_plan(
        '{"type": "special", "obj_name": "dig down", "obj_num": null, "tool": "wooden_pickaxe"}\n'
        '{"type": "kill", "obj_name": "leather", "obj_num": 3}\n'
    )
    assert plan.steps[0].type is StepType.DIG_DOWN and plan.steps[0].tool == "wooden_pickaxe"
    assert plan.steps[1].type is StepType.KILL and plan.steps[1].count == 3


@pytest.mark.parametrize(
    "text,fragment",
    [
        (
            '{"type": "mine", "obj_name": "logs", "obj_num": 4}\n{"type": "craft", "obj_name": "planks"',
            "x.jsonl:2: malformed JSON",
        ),
        ("", "x.jsonl: empty plan"),
        ("\n  \n", "x.jsonl: empty plan"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": 0}', "x.jsonl:1: 'obj_num' must be from 1"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": -3}', "x.jsonl:1: 'obj_num' must be from 1"),
        (f'{{"type": "mine", "obj_name": "logs", "obj_num": {MAX_COUNT + 1}}}', "must be from 1 to"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": "four"}', "'obj_num' must be a whole number"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": 2.5}', "'obj_num' must be a whole number"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": true}', "'obj_num' must be a whole number"),
        ('{"type": "build", "obj_name": "house", "obj_num": 1}', "unknown step type 'build'"),
        ('{"type": "special", "obj_name": "jump", "obj_num": null}', "the special steps are 'dig down' and 'climb up'"),
        ('{"type": "mine", "obj_name": "", "obj_num": 1}', "'obj_name' must be a non-empty"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": 1, "colour": "red"}', "unknown field(s) ['colour']"),
        ("[1, 2]", "expected a JSON object per line"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": 5}', "'tool' must be a string or null"),
    ],
)
def test_format_errors_say_where_and_what(text, fragment):
    with pytest.raises(PlanFormatError) as info:
        parse_plan(text, "x.jsonl")
    assert fragment in str(info.value)


def test_binary_and_missing_files(tmp_path):
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(PlanFormatError, match="binary file"):
        read_plan(binary)
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(b'{"type": "mine", "obj_name": "caf\xe9", "obj_num": 1}')
    with pytest.raises(PlanFormatError, match="not UTF-8"):
        read_plan(latin)
    with pytest.raises(PlanFormatError, match="cannot read file"):
        read_plan(tmp_path / "missing.jsonl")
    with pytest.raises(PlanFormatError, match="is a folder"):
        read_plan(tmp_path)
