"""``barsym execute`` and ``barsym eval --world`` end to end: text, JSON, exit codes, bad input."""

from __future__ import annotations

import json

import pytest

from cli_run import one_line, run
from testdata import BAR_DIR, EXPERT_FILES

FILES = {p.stem: str(p) for p in EXPERT_FILES}


def test_text_report(capsys):
    code, out, err = run(capsys, "execute", FILES["diamond_pickaxe"], FILES["note_block"], "--runs", "60")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "diamond_pickaxe.jsonl: " in lines[0] and "runs succeeded" in lines[0] and "95 % interval" in lines[0]
    assert "budget 16,000 ticks" in lines[0]
    assert any(line.startswith("  ticks of successful runs: median ") for line in lines)
    assert "note_block.jsonl: 0/60 runs succeeded: 0.0 %" in out
    assert "60 failed at step 2 (craft 21 planks): missing_ingredient" in out
    assert "a typical failed run: step 2, craft 21 planks, failed: crafting 21 planks" in out
    assert "inventory: 5 logs; layer 0 (surface)" in out
    assert lines[-1].startswith("summary: 2 plan(s), 120 runs in the stochastic world (seed 0): ")


def test_json_fields(capsys):
    code, out, _ = run(capsys, "execute", "--json", "--runs", "30", "--seed", "5", FILES["diamond_pickaxe"])
    assert code == 0
    (record,) = json.loads(out)
    assert {
        "file",
        "world",
        "runs",
        "successes",
        "success_rate",
        "interval",
        "failures",
        "ticks",
        "description",
    } <= set(record)
    assert record["world"] == "stochastic" and record["runs"] == 30 and record["seed"] == 5
    assert 0 <= record["interval"][0] <= record["success_rate"] <= record["interval"][1] <= 1
    assert sum(f["count"] for f in record["failures"]) == 30 - record["successes"]
    assert all(set(f) == {"step", "code", "count"} for f in record["failures"])
    assert set(record["ticks"]) == {"median", "p90"} and record["ticks"]["median"] <= record["ticks"]["p90"]
    again = json.loads(run(capsys, "execute", "--json", "--runs", "30", "--seed", "5", FILES["diamond_pickaxe"])[1])
    assert again == [record]


def test_deterministic_world_and_start_state(capsys):
    code, out, _ = run(capsys, "execute", "--world", "deterministic", "--json", FILES["iron_pickaxe"])
    (record,) = json.loads(out)
    assert code == 0 and record["runs"] == 1 and record["success_rate"] == 1.0 and record["budget"] is None
    plan = FILES["stone_pickaxe"]
    code, out, _ = run(capsys, "execute", "--world", "deterministic", "--start", "logs=0", "--layer", "1", plan)
    assert code == 0 and "0/1 runs succeeded" in out and "wrong_layer" in out  # logs are not found underground


def test_unusable_files_are_exit_2_after_the_others(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    code, out, err = run(capsys, "execute", "--runs", "5", bad, FILES["stone_axe"])
    assert code == 2 and one_line(err) and "bad.jsonl:1: malformed JSON" in err
    assert "stone_axe.jsonl: " in out and "1 unusable" in out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--runs", "0"], "--runs must be from 1 to 100000, got '0'"),
        (["--runs", "-5"], "--runs must be from 1 to 100000, got '-5'"),
        (["--runs", "many"], "--runs must be a whole number from 1 to 100000, got 'many'"),
        (["--runs", "2.5"], "--runs must be a whole number from 1 to 100000"),
        (["--runs", "9" * 5000], "--runs must be a whole number from 1 to 100000"),
        (["--runs", "1000000"], "--runs must be from 1 to 100000"),
        (["--budget", "0"], "--budget must be from 1 to 1000000"),
        (["--budget", "99999999999"], "--budget must be from 1 to 1000000"),
        (["--budget", "nan"], "--budget must be a whole number from 1 to 1000000"),
        (["--budget", "-1"], "--budget must be from 1 to 1000000"),
        (["--world", "minecraft"], "--world must be one of deterministic, stochastic, got 'minecraft'"),
        (["--world", ""], "--world must be one of deterministic, stochastic, got ''"),
        (["--world-seed", "-1"], "--world-seed must be from 0 to 18446744073709551615"),
        (["--world-seed", "x"], "--world-seed must be a whole number from 0"),
        (["--start", "logs=lots"], "--start 'logs=lots': expected ITEM=N"),
    ],
)
def test_bad_options_are_one_line_exit_2(capsys, argv, words):
    code, out, err = run(capsys, "execute", FILES["stone_axe"], *argv)
    assert code == 2 and out == "" and one_line(err) and words in err and len(err) < 300, err


def test_eval_adds_execution_per_group(capsys, tmp_path):
    report = tmp_path / "eval.json"
    code, out, _ = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--quiet",
        "--world",
        "stochastic",
        "--runs",
        "10",
        "--json",
        report,
    )
    assert code == 0
    table = out[out.index("execution in the stochastic world (10 runs per plan, seed 0)") :].splitlines()
    assert table[1].split()[:5] == ["group", "tasks", "success", "95", "%"]
    assert [line.split()[0] for line in table[2:8]] == ["stone", "iron", "gold", "redstone", "diamond", "all"]
    data = json.loads(report.read_text())["execution"]
    assert data["world"] == "stochastic" and data["runs"] == 10
    assert data["groups"]["all"]["tasks"] == 53 and data["groups"]["all"]["runs"] == 530
    assert data["tasks"]["redstone/note_block"]["expert"]["success_rate"] == 0.0
    assert 0 <= data["groups"]["stone"]["success_rate"] <= 1


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--runs", "10"], "--runs needs --world deterministic or --world stochastic"),
        (["--world", "real"], "--world must be one of deterministic, stochastic, got 'real'"),
        (["--world", "stochastic", "--runs", "0"], "--runs must be from 1 to 100000"),
        (["--world", "stochastic", "--world-seed", "-2"], "--world-seed must be from 0"),
    ],
)
def test_eval_world_options_are_checked_first(capsys, argv, words):
    code, out, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", *argv)
    assert code == 2 and out == "" and one_line(err) and words in err, err
