"""The SQLite call log and ``barsym logs``, with a scripted model (no GGUF).

Every real call of a plan is a row with its prompt, grammar, reply and
verdict; ``barsym logs`` shows the last ones; bad input and unusable files are
one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from barsym.cli import main
from barsym.llm import ScriptedLLM
from barsym.model import Goal
from barsym.planner import PlanContext, SymbolicDecomposer, layer_goal, make_planner
from barsym.reasoning.calls.call_log import SCHEMA_VERSION, CallLog, LogError
from barsym.reasoning.grammars.reply_grammar import render_reply
from barsym.reasoning.prompts.few_shot import EXAMPLE_ROOT
from barsym.testing.fakes import asked as asked_goal

SHORT_PICKAXE = "craft 1 stone_pickaxe: 1 cobblestone, 2 stick, 1 crafting_table"


@pytest.fixture
def log_path(tmp_path, monkeypatch):
    path = tmp_path / "logs.db"
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    return path


def plan_with_a_refusal(kb, path):
    """The first answer (for the stone pickaxe) is refused, then every goal gets the symbolic answer."""
    symbolic = SymbolicDecomposer(kb, prefer=kb.prefer)
    answers = iter([SHORT_PICKAXE])

    def reply(call):
        first = next(answers, None)
        if first is not None:
            return first
        count, _, item = asked_goal(call.last_user_message).partition(" ")
        goal = layer_goal(int(item)) if count == "layer" else Goal(item=item, count=int(count))
        return render_reply(symbolic.decompose(goal, PlanContext(kb, EXAMPLE_ROOT)))

    log = CallLog(path)
    model = ScriptedLLM([reply] * 20)
    planner = make_planner("bar", kb, backend=model, log=log, facts=True, command="barsym plan stone_pickaxe")
    planner.plan(Goal(item="stone_pickaxe"))
    return log, model


def test_every_call_is_a_row_with_its_verdict(kb, log_path):
    log, model = plan_with_a_refusal(kb, log_path)
    records = log.recent(None)
    assert len(records) == len(model.calls) >= 2
    first, second = records[:2]
    assert (first.verdict, second.verdict) == ("refused", "accepted")
    assert first.goal == "1 stone_pickaxe" and first.attempt == 1 and second.attempt == 2
    assert any("missing ingredient" in p for p in first.problems)
    assert first.messages == model.calls[0].messages and first.grammar == model.calls[0].grammar
    assert first.reply == SHORT_PICKAXE and first.command == "barsym plan stone_pickaxe"
    assert second.temperature > 0  # a retry samples
    prefixes = log.db.execute('SELECT COUNT(*) FROM texts WHERE body LIKE \'[{"role": "system"%\'').fetchone()[0]
    assert prefixes == 1  # the few-shot prefix is stored once for all calls


def test_barsym_logs_shows_the_last_calls(kb, log_path, capsys):
    plan_with_a_refusal(kb, log_path)[0].close()
    assert main(["logs", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n#") + out.startswith("#") == 2
    assert "verdict: accepted" in out and "reply: " in out and "user: Known: craft " in out
    assert main(["logs", "--json", "-n", "0"]) == 0
    calls = json.loads(capsys.readouterr().out)
    assert calls[0]["verdict"] == "refused" and calls[0]["messages"][0]["role"] == "system"
    assert main(["logs", "--full", "-n", "1"]) == 0
    assert "root ::=" in capsys.readouterr().out


@pytest.mark.parametrize("limit", ["x", "-1", "2.5", "10000000000"])
def test_a_bad_limit_is_one_line_and_exit_2(log_path, capsys, limit):
    assert main(["logs", "--limit", limit]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--limit" in err


def test_no_log_yet_is_not_an_error(log_path, capsys):
    assert main(["logs"]) == 0
    assert "no LLM calls logged yet" in capsys.readouterr().err
    assert main(["logs", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # a script reads an empty list, not an empty stream
    assert not log_path.exists()  # reading never creates the file


def test_a_file_that_is_not_a_log_is_one_line(log_path, capsys):
    log_path.write_text("not sqlite at all " * 100)
    assert main(["logs"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a barsym call log" in err


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "logs.db"
    CallLog(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(LogError, match="schema version"):
        CallLog(path)


def test_logging_off_and_an_unwritable_log_never_stop_a_plan(kb, tmp_path, monkeypatch):
    monkeypatch.setenv("BARSYM_LOG_DB", "off")
    planner = make_planner("bar", kb, backend=ScriptedLLM(["craft 4 stick: 2 planks"]))
    assert planner.decomposer.caller.log is None
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("BARSYM_LOG_DB", str(blocker / "logs.db"))
    with pytest.warns(UserWarning, match="not logging LLM calls"):
        planner = make_planner("bar", kb, backend=ScriptedLLM(["craft 4 stick: 2 planks"]))
    assert planner.plan(Goal(item="stick", count=4)).validation.valid


def test_state_consistency_calls_are_logged_too(kb, log_path):
    """The step scorer's and forward repairer's calls go to the same log, with their verdicts."""
    from barsym.llm import BackendTimeoutError
    from barsym.model import Step, StepType
    from barsym.reasoning.scoring.step_scorer import LLMStepScorer

    steps = [Step(type=StepType.MINE, item="logs", count=1), Step(type=StepType.CRAFT, item="planks", count=4)]
    scorer = LLMStepScorer(ScriptedLLM(["7", BackendTimeoutError]))
    assert scorer.score(steps, Goal(item="planks", count=4)) == [7, None]
    rows = CallLog(log_path).recent(None)
    assert [(r.goal, r.verdict, r.reply) for r in rows] == [
        ("score step 1 of 4 planks", "accepted", "7"),
        ("score step 2 of 4 planks", "backend-error", None),
    ]
    # counted as every model call is (issue 36): a failed call is a call, and a backend error
    assert scorer.stats.llm_calls == 2 and scorer.stats.backend_errors == 1


def test_parse_calls_are_logged_like_the_planners(kb, log_path, tmp_path, capsys):
    """``barsym parse`` asks the model through the same counted, logged calls (issue 36: one gateway)."""
    text = tmp_path / "plan.txt"
    text.write_text("chop four logs, then make planks")
    assert main(["parse", str(text), "--llm-stand-in", "copy-facts", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = CallLog(log_path).recent(None)
    assert [(r.goal, r.verdict) for r in rows] == [
        ("parse: chop 4 logs", "accepted"),
        ("parse: make planks", "accepted"),
    ]
    assert [r.reply for r in rows] == [s["reply"] for s in out["steps"]] and out["calls"] == 2


def test_a_model_failing_mid_parse_stops_the_parse_and_is_logged(kb, log_path):
    from barsym.llm import BackendTimeoutError
    from barsym.planner.registry import graph_for
    from barsym.reasoning.prose.parser import ProseParser

    parser = ProseParser(kb, graph_for(kb), ScriptedLLM(["mine 4 logs", BackendTimeoutError]), log=True)
    with pytest.raises(BackendTimeoutError):
        parser.parse("chop four logs, then make planks")
    assert [r.verdict for r in CallLog(log_path).recent(None)] == ["accepted", "backend-error"]


def test_logs_filters_by_run_and_command_and_names_the_model(kb, log_path, tmp_path, capsys):
    """Every process writes into one log: ``--run N`` and ``--command TEXT`` pick one's calls; each row names its
    run's model (a parse, which starts no plan, gets a run of its own command line)."""
    text = tmp_path / "plan.txt"
    text.write_text("chop four logs, then make planks")
    assert main(["parse", str(text), "--llm-stand-in", "copy-facts", "--format", "json"]) == 0
    plan_with_a_refusal(kb, log_path)  # a plan through a scripted model: the model the fake names
    capsys.readouterr()
    rows = CallLog(log_path).recent(None)
    parse_run, plan_run = rows[0].run, rows[-1].run
    assert parse_run is not None and plan_run not in (None, parse_run)
    assert rows[0].command == f"barsym parse {text} --llm-stand-in copy-facts --format json"
    assert rows[0].model == "stand-in copy-facts (no model)"

    assert main(["logs", "--run", str(parse_run), "-n", "0", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["goal"] for r in shown] == ["parse: chop 4 logs", "parse: make planks"]
    assert {r["model"] for r in shown} == {"stand-in copy-facts (no model)"}
    assert main(["logs", "--command", "plan stone_pickaxe", "-n", "0", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown and {r["run"] for r in shown} == {plan_run}
    assert main(["logs", "--command", "barsym parse", "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"#{rows[1].id}  ") and "\n  model: stand-in copy-facts (no model)\n" in out
    assert main(["logs", "--command", "100%_"]) == 0  # a plain substring, not a LIKE pattern
    captured = capsys.readouterr()
    assert captured.out == "" and "no LLM call of that run or command" in captured.err


def test_a_run_names_the_in_process_model_by_its_files(tmp_path):
    """The call log's runs name a GGUF and its adapter by file and SHA-256, as plan and eval outputs do."""
    import hashlib

    from barsym.llm.provenance import backend_record, record_text

    model, adapter = tmp_path / "m.gguf", tmp_path / "a.gguf"
    model.write_bytes(b"GGUF model")
    adapter.write_bytes(b"GGUF adapter")

    class InProcess:  # what the llama.cpp backend exposes of itself
        model_path, adapter_path, state_dir = model, adapter, None

    text = record_text(backend_record(InProcess()))
    m, a = (hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in (model, adapter))
    assert text == f"m.gguf (sha256 {m}), adapter a.gguf (sha256 {a})"
    InProcess.adapter_path = None
    assert record_text(backend_record(InProcess())) == f"m.gguf (sha256 {m}), no adapter"
