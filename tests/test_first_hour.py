"""A new user's first hour (issue 35, items 5 and 7): an empty memory, where a report went, names resolved, the log.

Each of these was a rough edge found by trying every command on a fresh clone:
``memory show`` with no memory yet exited 2, ``report`` without ``-o`` did not
say where the page went, ``plan bed`` planned ``white_bed`` without a word, and
``barsym logs`` printed ``run None: ?`` and ``(None evaluated)``.
"""

from __future__ import annotations

import json

from barsym.eval import load_dataset
from barsym.eval.scale import run_evaluation
from barsym.eval.spec import RunSpec
from barsym.reasoning.calls.call_records import CallRecord
from cli_run import run
from testdata import BAR_DIR


def test_no_memory_yet_is_an_empty_one(capsys, tmp_path, monkeypatch):
    path = tmp_path / "never-written.sqlite"
    monkeypatch.setenv("BARSYM_MEMORY", str(path))  # the default memory, before anything was recorded
    code, out, err = run(capsys, "memory", "show")
    assert (
        code == 0
        and err == ""
        and out
        == f"no memory yet at {path}: nothing is remembered "
        + ("(barsym memory build, or plan and eval with --record, record plans into it)\n")
    )
    code, out, _ = run(capsys, "memory", "show", "--format", "json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = run(capsys, "memory", "stats")
    counts = json.loads(out)
    assert code == 0 and counts["plans"] == 0 and set(counts.values()) == {0}
    code, out, err = run(capsys, "memory", "export")
    assert code == 0 and out == "" and "no memory yet" in err
    assert not path.exists()  # reading made nothing
    code, out, err = run(capsys, "memory", "show", "--memory", path)  # a file named but not there: likely a typo
    assert code == 2 and "no such file" in err


def test_report_without_o_says_where_it_wrote(capsys, tmp_path, kb, monkeypatch):
    runs = tmp_path / "symbolic.jsonl"
    run_evaluation(RunSpec("symbolic"), load_dataset(BAR_DIR, kb)[:2], kb, name="s", dataset="bar", run_path=runs)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "report", runs)
    page = tmp_path / "report.html"
    assert code == 0 and page.is_file() and out.startswith(f"wrote {page} (1 run(s), 2 task records)"), out


def test_a_resolved_name_is_said(capsys):
    code, out, err = run(capsys, "plan", "bed", "--planner", "symbolic")
    assert code == 0 and err == "barsym: bed -> white_bed\n" and out.startswith("Plan for 1 white_bed")
    code, out, err = run(capsys, "plan", "Minecraft:Stick", "--planner", "symbolic", "--format", "json")
    assert code == 0 and err == "" and json.loads(out)["goal"]["item"] == "stick"


def _record(**changes) -> CallRecord:
    fields = dict(
        id=7,
        at=0.0,
        run=None,
        command="",
        goal="1 stick",
        attempt=1,
        messages=[{"role": "user", "content": "Goal: 1 stick"}],
        grammar='root ::= "x"',
        reply="craft 1 stick: 2 planks",
        verdict="accepted",
        problems=[],
        seconds=0.5,
        temperature=0.0,
        prompt_tokens=12,
        evaluated_tokens=None,
        completion_tokens=6,
        evaluations=None,
    )
    return CallRecord(**{**fields, **changes})


def test_logs_never_print_none_or_a_question_mark():
    text = _record().to_text()
    assert "None" not in text and "?" not in text
    assert "  no run\n" in text.splitlines()[0] + "\n" and "; prompt 12 tokens, reply 6 tokens" in text
    named = _record(run=3, command="barsym plan stick", evaluated_tokens=4, evaluations=7).to_text()
    assert "run 3: barsym plan stick" in named and "prompt 12 tokens (4 evaluated), reply 6 tokens in 7 model" in named
