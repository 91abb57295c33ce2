"""What a hostile new user tried, and what barsym now says: one line on stderr, exit 2.

Each section is one finding of the probe: the input that used to end in a
traceback, a crash or a silently wrong answer, and the one clear line that
replaces it. Runs through ``barsym.cli.main`` (as tests/test_validate_cli.py
and tests/test_llm_cli.py do) except where only a fresh interpreter shows the
fault.
"""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import PlanFormatError, loads_json, parse_plan
from barsym.cli import main
from testdata import EXPERT_FILES


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err


# ----------------------------------------------------------------- 1. JSON too deep, numbers too long

DEEP = "[" * 5000 + "]" * 5000
LONG_NUMBER = "9" * 5000


@pytest.mark.parametrize("line, words", [
    (DEEP, "JSON nested too deeply"),
    ('{"type": ' + DEEP + '}', "JSON nested too deeply"),
    ('{"type": "mine", "obj_name": "logs", "obj_num": ' + LONG_NUMBER + '}', "a number has more than"),
    ('{"type": [], "obj_name": "logs", "obj_num": 1}', "unknown step type []"),  # a list is not hashable
    ('{"type": {"a": 1}, "obj_name": "logs", "obj_num": 1}', "unknown step type {'a': 1}"),
])
def test_plan_lines_python_cannot_read_are_format_errors(capsys, tmp_path, line, words):
    plan = tmp_path / "hostile.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1}\n' + line + "\n")
    code, out, err = run(capsys, "validate", plan)
    assert code == 2 and one_line(err), err
    assert f"{plan}:2: " in err and words in err
    assert "1 unusable" in out


def test_long_values_are_quoted_short():
    # legal JSON, but quoting 4000 digits or 900 nested lists back would bury the message
    for value in ("9" * 4000, "[" * 900 + "]" * 900):
        with pytest.raises(PlanFormatError) as info:
            parse_plan('{"type": "mine", "obj_name": "logs", "obj_num": ' + value + '}', "x.jsonl")
        assert len(str(info.value)) < 200 and "characters)" in str(info.value)


def test_loads_json_names_where_and_how():
    assert loads_json('{"a": [1]}', "f") == {"a": [1]}
    with pytest.raises(PlanFormatError, match=r"^f:3: malformed JSON at column 6: Expecting"):
        loads_json('{"a" 1}', "f:3")
    with pytest.raises(PlanFormatError, match=r"^f: malformed JSON at line 2 column 1"):
        loads_json('{"a":\n}', "f")
    with pytest.raises(PlanFormatError, match="nested too deeply"):
        loads_json(DEEP, "f")


@pytest.mark.parametrize("layout, words", [
    ("folder", "nested too deeply"),
    ("list", "a number has more than"),
])
def test_datasets_python_cannot_read_are_one_line(capsys, tmp_path, layout, words):
    if layout == "folder":
        (tmp_path / "tasks.json").write_text('{"g": ' + DEEP + "}")
        dataset = tmp_path
    else:
        dataset = tmp_path / "tasks.json"
        dataset.write_text('[{"task": "t", "object": "stick", "count": ' + LONG_NUMBER + "}]")
    code, out, err = run(capsys, "eval", "--planner", "symbolic", "--dataset", dataset)
    assert code == 2 and out == "" and one_line(err) and words in err and "tasks.json" in err


def test_an_expert_plan_nested_too_deeply_names_its_file(capsys, tmp_path):
    (tmp_path / "tasks.json").write_text(json.dumps({"g": {"stick": {"obj_name": "stick", "obj_num": 1}}}))
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "stick.jsonl").write_text(DEEP + "\n")
    code, _, err = run(capsys, "eval", "--planner", "symbolic", "--dataset", tmp_path)
    assert code == 2 and one_line(err) and "stick.jsonl:1: JSON nested too deeply" in err


# ----------------------------------------------------------------- 2. float options that are not numbers

@pytest.mark.parametrize("option", ["--temperature", "--retry-temperature", "--llm-timeout"])
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
@pytest.mark.parametrize("command", ["plan", "eval"])
def test_float_options_must_be_finite(capsys, tmp_path, option, value, command):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "t", "group": "g", "object": "stick"}]))
    head = ["plan", "stick"] if command == "plan" else ["eval", "--dataset", tasks]
    code, out, err = run(capsys, *head, f"{option}={value}")
    assert code == 2 and out == "" and one_line(err), err
    assert f"{option} must be a finite number from " in err and repr(value) in err


@pytest.mark.parametrize("argv, words", [
    (["--temperature=-1"], "--temperature must be from 0 to 5, got '-1'"),
    (["--llm-timeout", "0"], "--llm-timeout must be from 0.1 to 3600"),
    (["--seed", str(2**32)], "--seed must be from 0 to 4294967295"),
    (["--seed", "9" * 5000], "--seed must be a whole number from 0 to 4294967295"),
])
def test_out_of_range_llm_options(capsys, argv, words):
    code, out, err = run(capsys, "plan", "stick", *argv)
    assert code == 2 and one_line(err) and words in err and len(err) < 300, err


@pytest.mark.parametrize("argv, words", [
    (["plan", "stick", "--count", "\u00b2"], "--count must be a whole number from 1 to"),  # '²'.isdigit() is True
    (["plan", "stick", "--count", "9" * 5000], "--count must be a whole number from 1 to"),
    (["validate", "--start", "logs=\u00b2", EXPERT_FILES[0]], "--start 'logs=\u00b2': expected ITEM=N"),
    (["validate", "--start", "logs=" + "9" * 5000, EXPERT_FILES[0]], "expected ITEM=N with N a whole number"),
    (["validate", "--start", "logs=99999999", EXPERT_FILES[0]], "from 0 to 23040"),
])
def test_counts_int_cannot_read_are_usage_errors(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and one_line(err) and words in err and len(err) < 300, err


# ----------------------------------------------------------------- 3. --goal-count without --goal

def test_goal_count_without_goal_is_a_usage_error(capsys):
    code, out, err = run(capsys, "validate", "--goal-count", "2", EXPERT_FILES[0])
    assert code == 2 and out == "" and one_line(err)
    assert "--goal-count 2 needs --goal ITEM too, e.g. --goal diamond --goal-count 2" in err


def test_goal_count_with_goal_still_counts(capsys, tmp_path):
    plan = tmp_path / "p.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1}\n{"type": "craft", "obj_name": "planks", "obj_num": 4}\n')
    assert run(capsys, "validate", "--goal", "planks", "--goal-count", "4", plan)[0] == 0
    code, out, _ = run(capsys, "validate", "--goal", "planks", "--goal-count", "5", plan)
    assert code == 1 and "goal_not_reached" in out
