"""Issue 53, items 6, 8, 9 and 10: no silent truncation in parse, echoes cut, the API's arguments, the report's names.

- ``parse``: a text of more clauses than it reads is refused naming the limit (before: the first 200
  were parsed and the verdict was of a cut plan), a count is the text's (before: capped at 999 without
  a word) or a refusal naming the most a step holds, and a 5000-digit count is one line (before: a
  traceback). The stand-in ``copy-facts`` answers, so no model is needed.
- Every echo of the user's text is cut to the documented length (``barsym.steps.MOST_ECHO``, 2000
  characters; docs/reliability.md): a 200,000-character item name is not printed whole, by any command.
- The API: each bad argument of the issue is a TypeError or ValueError naming it.
- ``barsym report``: NUL, ESC and U+202E in task names, groups and planners reach the page escaped.
"""

from __future__ import annotations

import json

import pytest

import barsym
from barsym.reasoning.prose.clauses import MAX_CLAUSE_CHARS, MAX_CLAUSES
from barsym.steps import MAX_COUNT, MOST_ECHO
from cli_run import one_line, run

pytestmark = pytest.mark.hostile

STAND_IN = ("--llm-stand-in", "copy-facts")


# ---- parse: all clauses, or a refusal naming the limit -------------------------------------------------------------


def _parse(capsys, tmp_path, text: str, *extra):
    path = tmp_path / "plan.txt"
    path.write_text(text)
    return run(capsys, "parse", path, *STAND_IN, *extra)


def test_parse_reads_every_clause_up_to_the_limit(capsys, tmp_path):
    code, out, err = _parse(capsys, tmp_path, ", ".join(["mine 1 logs"] * MAX_CLAUSES), "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["steps"]) == MAX_CLAUSES


@pytest.mark.parametrize("clauses", [MAX_CLAUSES + 1, MAX_CLAUSES + 2, 5 * MAX_CLAUSES])
def test_parse_refuses_a_text_past_the_limit_naming_it(capsys, tmp_path, clauses):
    code, out, err = _parse(capsys, tmp_path, ", ".join(["mine 1 logs"] * clauses))
    assert code == 2 and one_line(err) and out == ""
    assert f"has {clauses} clauses" in err and f"at most {MAX_CLAUSES}" in err


@pytest.mark.parametrize("count", [1000, 5000, MAX_COUNT])
def test_a_count_is_the_texts_not_a_cap(capsys, tmp_path, count):
    code, out, err = _parse(capsys, tmp_path, f"mine 3 logs, then craft {count} planks", "--format", "json")
    steps = [s["step"] for s in json.loads(out)["steps"]]
    assert steps[-1].startswith(f"craft {count} ") and steps[-1].endswith("planks"), steps


@pytest.mark.parametrize(
    "digits, limit",
    [
        ("23041", f"more than {MAX_COUNT}"),
        ("99999999999", f"more than {MAX_COUNT}"),
        ("9" * 900, f"more than {MAX_COUNT}"),  # past int()'s 4300 digits is past the clause's length too:
        ("9" * 5000, f"clauses of at most {MAX_CLAUSE_CHARS}"),
    ],
)
def test_a_count_no_step_may_hold_is_one_line(capsys, tmp_path, digits, limit):
    code, out, err = _parse(capsys, tmp_path, f"mine 3 logs, then craft {digits} planks")
    assert code == 2 and one_line(err) and out == "" and "Traceback" not in err
    assert limit in err and "clause 2" in err and len(err) < 600


def test_a_clause_longer_than_any_step_is_refused_before_names_are_matched(capsys, tmp_path):
    code, out, err = _parse(capsys, tmp_path, "mine 3 logs, then craft 1 " + "y" * 200_000)
    assert code == 2 and one_line(err) and f"at most {MAX_CLAUSE_CHARS}" in err and len(err) < 600


# ---- echoes of the user's text: cut at the documented length ---------------------------------------------------------

HUGE = "x" * 200_000


@pytest.fixture
def huge_plans(tmp_path):
    record = tmp_path / "huge.jsonl"
    record.write_text(json.dumps({"type": "craft", "obj_name": HUGE, "obj_num": 1, "tool": None}) + "\n")
    notation = tmp_path / "huge.txt"
    notation.write_text(f"mine 3 logs\ncraft 1 {HUGE}\n")
    prose = tmp_path / "huge-prose.txt"
    prose.write_text(f"mine 3 logs, then craft 1 {HUGE}\n")
    return record, notation, prose


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{record}"],
        ["validate", "{notation}"],
        ["validate", "{record}", "--goal", "stick"],
        ["validate", "{notation}", "--goal", HUGE],
        ["repair", "{record}"],
        ["execute", "{notation}", "--runs", "3"],
        ["score", "{record}", "--scores", "simulator"],
        ["parse", "{prose}", *STAND_IN],
        ["plan", HUGE],
        ["graph", HUGE],
        ["plan", "stick", "--start", f"{HUGE}=1"],
    ],
    ids=lambda argv: " ".join(a[:12] for a in argv[:3]),
)
def test_no_command_prints_a_huge_name_whole(capsys, huge_plans, argv):
    record, notation, prose = huge_plans
    filled = [a.format(record=record, notation=notation, prose=prose) if a.startswith("{") else a for a in argv]
    code, out, err = run(capsys, *filled)
    assert "Traceback" not in err
    assert len(out) + len(err) < 4 * MOST_ECHO + 4000  # a few cut echoes and the usual lines, not 200,000 characters
    assert HUGE[: MOST_ECHO + 1] not in out + err


# ---- the Python API: each bad argument named ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, kind, words",
    [
        (lambda: barsym.env.CraftingEnv(goal=None), TypeError, "goal must be"),
        (lambda: barsym.env.CraftingEnv(goal=7), TypeError, "goal must be"),
        (lambda: barsym.plan("stick", planner="bogus"), ValueError, "planner must be one of"),
        (lambda: barsym.plan("stick", planner=None), TypeError, "planner must be"),
        (lambda: barsym.plan("unobtainium"), ValueError, "unknown item 'unobtainium'"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", seed=-1), ValueError, "seed must be from 0"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", seed="1"), TypeError, "seed must be a whole number"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", runs=10**12), ValueError, "runs must be from 1 to 100000"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", runs="a"), TypeError, "runs must be a whole number"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", runs=0), ValueError, "runs must be from 1"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", budget=-3), ValueError, "budget must be from 1"),
        (lambda: barsym.execute(["mine 1 logs"], "logs", world=None), ValueError, "world must be one of"),
    ],
)
def test_the_api_names_each_bad_argument(call, kind, words):
    with pytest.raises(kind, match=words):
        call()


def test_an_unknown_item_is_a_value_error_and_still_a_key_error():
    from barsym.kb import UnknownItemError

    with pytest.raises(ValueError) as caught:
        barsym.validate(["mine 1 logs"], "unobtainium")
    assert isinstance(caught.value, (UnknownItemError, KeyError))


# ---- the report: control and bidi characters in names ---------------------------------------------------------------

NASTY = "a\x00b\x1b[31mc\u202etxt.exe\x07"


def test_the_report_shows_controls_and_bidi_in_names_escaped(capsys, tmp_path):
    path = tmp_path / "run.jsonl"
    code, _, err = run(
        capsys, "eval", "--dataset", "bar", "--limit", "2", "--planner", "symbolic", "--quiet", "--run", path
    )
    assert code == 0, err
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["planner"] = "symbolic" + NASTY
    for record in lines[1:]:
        record["group"] = record["group"] + NASTY
        record["key"] = f"{record['group']}/{record['key'].split('/')[-1]}{NASTY}"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    page = tmp_path / "report.html"
    code, _, err = run(capsys, "report", path, "-o", page)
    assert code == 0, err
    html = page.read_text(encoding="utf-8", errors="surrogateescape")
    for raw in ("\x00", "\x1b", "\u202e", "\x07"):
        assert raw not in html
    assert "txt.exe" in html and "\\u202e" in html and "\\x1b" in html
