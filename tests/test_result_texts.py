"""The texts and records the commands print are the library's: the API shows what the CLI shows (issue 21).

Each test makes a result through the library, asks it (or the function next
to its type) for its text or record, and compares with what the command
printed for the same input, or checks the parts the command used to build.
"""

from __future__ import annotations

import io
import json

import pytest

from barsym import api
from barsym.bar_io import read_plan
from barsym.consistency import ConsistencyConfig, StateConsistency, simulator_scores
from barsym.consistency.report import (
    anchor_pairs,
    crosscheck_text,
    repair_record,
    repair_status,
    repair_text,
    score_record,
    score_text,
)
from barsym.eval import evaluate, load_dataset
from barsym.eval.execution import execute_evaluation
from barsym.eval.interrupt import resume_hint
from barsym.eval.spec import WorldSpec
from barsym.memory import MemoryStore, TaskRecorder, with_memory
from barsym.memory.maintenance import build, decomposition_line, decompositions, export_jsonl, import_jsonl
from barsym.memory.recorder import RecordingPlanner
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.planner.render import llm_lines
from barsym.planner.stats import PlanStats
from barsym.reasoning.calls.call_records import CallRecord, damaged_summary
from barsym.reasoning.prose.prose_io import read_text
from barsym.report.execution import execution_record, group_executions
from barsym.report.llm_report import format_memory
from barsym.sim.options import ExecutionOptions
from barsym.sim.world import DeterministicWorld
from barsym.validation import Validator
from cli_run import run
from testdata import BAR_DIR, REPO

EXAMPLE = REPO / "examples" / "diamond_pickaxe.jsonl"
BROKEN = ["craft 4 planks", "craft 1 crafting_table"]  # no logs: step 1 cannot run


def test_a_plan_result_prints_what_barsym_plan_prints(kb, capsys):
    result = make_planner("symbolic", kb).plan(Goal(item="stone_pickaxe", count=1))
    code, out, _ = run(capsys, "plan", "stone_pickaxe", "--planner", "symbolic")
    lines = out.splitlines()  # the result's text (but the time line), then what ran
    assert code == 0 and lines[:-2] == result.to_text().splitlines()[:-1]
    assert lines[-1] == "ran: planner symbolic (no model), rules survival, start layer 0 (surface); inventory: nothing"

    code, out, _ = run(capsys, "plan", "stone_pickaxe", "--planner", "symbolic", "--format", "json")
    printed = json.loads(out)
    assert {k: printed.pop(k) for k in ("status", "reason", "exit_code")} == {
        "status": "planned",
        "reason": None,
        "exit_code": 0,
    }
    assert {k: printed.pop(k) for k in ("model", "rules", "start")} == {  # what ran, beside the result
        "model": None,
        "rules": "survival",
        "start": {"layer": 0, "inventory": {}},
    }
    ours = json.loads(json.dumps(result.to_dict()))
    assert printed.pop("stats").keys() == ours.pop("stats").keys()  # the same counters (times differ by run)
    assert printed == ours


def test_a_repaired_plan_says_how_state_consistency_ran(capsys):
    """bar-sc and --consistency name module (b)'s configuration under what ran (text and JSON); --consistency
    with the simulator's scores and the symbolic repairer asks no model and names none."""
    code, out, _ = run(capsys, "plan", "stone_pickaxe", "--planner", "symbolic", "--consistency")
    assert code == 0 and out.splitlines()[-2:] == [
        "ran: planner symbolic (no model), rules survival, start layer 0 (surface); inventory: nothing",
        "state consistency ran as: step-scoring, simulator scores, t=5, k=3, repairer symbolic, at most 3 round(s)",
    ]
    argv = ["plan", "stone_pickaxe", "--planner", "bar-sc", "--llm-stand-in", "copy-facts", "--facts"]
    _, out, _ = run(capsys, *argv, "--no-fallback", "--repair-needs", "model")
    assert "repairer llm, needs planned by the model, at most 3 round(s)" in out.splitlines()[-2]
    _, out, _ = run(capsys, *argv, "--format", "json")
    assert json.loads(out)["repair"].endswith("repairer llm + symbolic fallback, at most 3 round(s)")


def test_the_modules_lines_say_nothing_for_a_plan_without_them():
    assert llm_lines(PlanStats()) == PlanStats().section_lines() == []


def test_validation_says_where_a_plan_fails(kb, capsys, tmp_path):
    path = tmp_path / "broken.txt"
    path.write_text("\n".join(BROKEN) + "\n")
    plan = read_plan(str(path))
    result = Validator(kb).validate(plan)
    assert result.failure().startswith("fails at step 1: ")
    code, out, _ = run(capsys, "validate", path)
    assert code == 1 and out.startswith(result.to_text(plan, kb.layers))
    good = api.validate(EXAMPLE)
    assert good.failure() is None
    assert good.to_text(read_plan(str(EXAMPLE)), quiet=True) == ""


def test_an_execution_summarises_itself_as_barsym_execute_does(kb, capsys):
    execution = api.execute(EXAMPLE, world="stochastic", runs=20, seed=3)
    code, out, _ = run(capsys, "execute", EXAMPLE, "--runs", "20", "--world-seed", "3")
    assert code == 0 and out.startswith(execution.to_text())
    assert "runs succeeded" in execution.to_text().splitlines()[0]


def test_a_repair_shows_its_diff_and_record(kb, tmp_path, capsys):
    path = tmp_path / "broken.txt"
    path.write_text("\n".join(BROKEN) + "\n")
    result = StateConsistency(kb, ConsistencyConfig()).repair(read_plan(str(path)), goal=Goal(item="crafting_table"))
    assert repair_status(result) == ("repaired", None)
    text = repair_text(str(path), result)
    assert (
        text.startswith(f"{path}: invalid -> valid")
        and "[repaired-symbolic]" in text
        and "1 step(s) repaired, 2 kept" in text
    )
    record = repair_record(str(path), result)
    assert record["valid_before"] is False and record["valid_after"] is True
    assert record["provenance"][0] == "repaired-symbolic" and record["steps"][-1]["obj_name"] == "crafting_table"
    code, out, _ = run(capsys, "repair", path, "--goal", "crafting_table")
    assert code == 0 and out == text


def test_scores_and_their_anchors_as_barsym_score_prints_them(kb, capsys):
    plan = read_plan(str(EXAMPLE))
    validator = Validator(kb)
    goal = plan.default_goal()
    validation = validator.validate(plan, goal=goal)
    sim = simulator_scores(validator, validation, 3)
    record = score_record(str(EXAMPLE), plan, goal, validation, sim, None, "simulator", 5, 3)
    assert [s["step"] for s in record["scores"]] == list(range(1, len(plan) + 1))
    assert record["anchors"] == {"simulator": anchor_pairs([s.score for s in sim], 5, 3)}
    code, out, _ = run(capsys, "score", EXAMPLE, "--scores", "simulator")
    assert code == 0 and out == score_text(record)
    assert anchor_pairs([None, None], 5, 3) == []  # a step without a score counts as 10: no anchor
    line = crosscheck_text(
        {
            "plans": 2,
            "steps": 9,
            "spearman": None,
            "spearman_per_plan_mean": 0.5,
            "t": 5,
            "simulator_anchors": 1,
            "llm_anchors": 0,
            "both_anchors": 1,
            "precision": None,
            "recall": 0.25,
            "llm_distribution": {"10": 9},
        }
    )
    assert "Spearman - (mean per plan 0.500)" in line and "recall 0.250" in line and "10: 9" in line


def test_a_memory_is_built_listed_exported_and_imported(kb, tmp_path):
    tasks = load_dataset(BAR_DIR, kb)[:2]
    options = ExecutionOptions(world="deterministic", runs=2)
    started = []
    with MemoryStore(tmp_path / "m.sqlite") as store:
        planner = with_memory(make_planner("symbolic", kb), kb, None)
        world = DeterministicWorld(kb)
        results = list(build(store, planner, tasks, world, options, lambda n, t: started.append((n, t.key))))
        assert started == [(1, tasks[0].key), (2, tasks[1].key)]
        assert [t.key for t, _ in results] == [t.key for t in tasks]
        assert all(not isinstance(ran, PlanningError) and ran.runs == 2 for _, ran in results)
        rows = decompositions(store)
        assert rows and all(r["runs"] >= 2 for r in rows)
        assert "runs over" in decomposition_line(rows[0])
        out = io.StringIO()
        export_jsonl(store, out)
        exported = out.getvalue()
        assert exported.count("\n") == store.counts()["plans"] == 2
    with MemoryStore(tmp_path / "copy.sqlite") as copy:
        assert import_jsonl(copy, exported, "export.jsonl") == (2, 2)
        assert import_jsonl(copy, exported, "export.jsonl") == (0, 2)  # already there: not added again
        with pytest.raises(ValueError, match=r"^bad\.jsonl:2: not JSON"):
            import_jsonl(copy, '{"a": 1}\n{oops\n', "bad.jsonl")
        assert copy.counts()["plans"] == 2


def test_a_recording_planner_records_each_plan_and_credits_its_runs(kb, tmp_path):
    with MemoryStore(tmp_path / "m.sqlite") as store:
        inner = with_memory(make_planner("symbolic", kb), kb, store)
        planner = RecordingPlanner(inner, TaskRecorder(store, inner.memory))
        assert planner.memory is inner.memory  # everything else is the wrapped planner's
        planner.plan(Goal(item="stick"))  # no task named: not recorded
        planner.task = "t/stick"
        planner.plan(Goal(item="stick"))
        assert list(planner.recorder.plan_ids) == ["t/stick"]
        line = planner.recorder.credit(
            {
                "world": "deterministic",
                "runs": 3,
                "seed": 0,
                "tasks": {"t/stick": {"planner": {"runs": 3, "successes": 3}}},
            }
        )
        assert line == f"recorded 1 plan(s) with 3 deterministic run(s) each into {store.path}"
        assert planner.recorder.credit(None) == f"recorded 1 plan(s) into {store.path}"  # nothing to credit
        assert sum(r["runs"] for r in decompositions(store)) >= 3


def test_an_evaluation_reports_its_parts(kb):
    tasks = load_dataset(BAR_DIR, kb)[:2]
    evaluation = evaluate(tasks, make_planner("symbolic", kb), kb)
    assert evaluation.first_stats().llm is None
    assert evaluation.unexecutable() == 0 and evaluation.backend_down() is None
    assert format_memory(evaluation).startswith("memory: 0 of 0 goal(s) answered from memory,")
    executions = execute_evaluation(evaluation, DeterministicWorld(kb), 2)
    rows = group_executions(evaluation, executions, 2)
    record = execution_record(rows, executions, "deterministic", 2, 0)
    assert record["runs"] == 2 and set(record["tasks"]) == {t.key for t in tasks} and "all" in record["groups"]
    assert WorldSpec.of(ExecutionOptions(world=None)) is None
    assert WorldSpec.of(ExecutionOptions(world="stochastic", runs=4)) == WorldSpec("stochastic", 4, 0, None)


def test_the_resume_hint_counts_what_a_run_file_kept(tmp_path):
    assert "run with --run FILE.jsonl" in resume_hint(None)
    assert "(0 finished task(s) kept" in resume_hint(tmp_path / "missing.jsonl")


def test_a_call_record_shows_itself(tmp_path):
    record = CallRecord(
        7, 0.0, 1, "barsym plan stick", "1 stick", 1, [{"role": "user", "content": "a\nb"}], "root ::= x",
        None, "refused", ["no"], 0.5, 0.0, 10, 4, 2, 3,
    )  # fmt: skip
    text = record.to_text()
    assert text.startswith("#7  ") and "  user: a\n    b" in text and "reply: (none)" in text
    assert "verdict: refused: no" in text and "1 rule(s)" in text and text.endswith("\n\n")
    assert "  grammar:\n    root ::= x" in record.to_text(full=True)
    assert damaged_summary([(3, "bad")]) == "1 damaged call record(s) skipped (#3; #3: bad)"


def test_prose_files_that_cannot_be_a_plan_are_refused(tmp_path):
    from barsym.bar_io import PlanFormatError

    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "bin.txt").write_bytes(b"mine\x00")
    for name, why in (("empty.txt", "empty"), ("bin.txt", "binary"), ("missing.txt", "cannot read")):
        with pytest.raises(PlanFormatError, match=why):
            read_text(str(tmp_path / name))
    (tmp_path / "ok.txt").write_text("chop four logs")
    assert read_text(str(tmp_path / "ok.txt")) == "chop four logs"


def test_an_evaluation_run_reports_as_barsym_eval_does(kb, capsys):
    from barsym.eval.scale import EvaluationRun
    from barsym.report.run_report import execution_part, report_record, report_text

    tasks = load_dataset(BAR_DIR, kb)[:2]
    assert len(tasks) == 2
    evaluation = evaluate(tasks, make_planner("symbolic", kb), kb, name="symbolic")
    options = ExecutionOptions(world="deterministic", runs=2)
    run_ = EvaluationRun(evaluation, {}, execute_evaluation(evaluation, DeterministicWorld(kb), 2))
    table, executed = execution_part(run_, options)
    assert table.startswith("execution in the deterministic world (2 runs per plan, seed 0)")
    assert execution_part(run_, ExecutionOptions(world=None)) is None
    text = report_text(run_, "symbolic", "bar", 2, execution=table, recorded="recorded 2 plan(s)", quiet=True)
    assert text.startswith("planner symbolic on bar (2 tasks)\n") and "\n\nrecorded 2 plan(s)\n" in text
    assert "memory:" not in text and "memory: " in report_text(run_, "symbolic", "bar", 2, memory=True)
    record = report_record(run_, executed)
    assert record["execution"]["runs"] == 2 and "summary" in record and set(record["tasks"]) == {t.key for t in tasks}
