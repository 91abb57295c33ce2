"""``barsym eval --repeats N``: BAR's protocol, every task N times, each group's mean and spread.

A stand-in answers (no model is loaded): ``random`` at a temperature gives runs
that differ with the seed, ``copy-facts`` at temperature 0 gives identical runs.
"""

from __future__ import annotations

import json

from cli_run import one_line, run


def eval_json(capsys, tmp_path, *argv):
    out = tmp_path / "out.json"
    code, printed, err = run(capsys, "eval", "--dataset", "bar", "--limit", "4", "--quiet", "-o", out, *argv)
    return code, printed, err, (json.loads(out.read_text()) if out.is_file() else None)


def test_each_repeat_moves_the_seed_on_and_the_spread_is_over_the_runs(capsys, tmp_path):
    code, printed, _, data = eval_json(
        capsys, tmp_path, "--planner", "cot", "--llm-stand-in", "random", "--temperature", "0.8", "--repeats", "3"
    )
    assert code in (0, 1) and data is not None
    repeats = data["repeats"]
    assert repeats["runs"] == 3 and repeats["seeds"] == [0, 1, 2]
    stone = repeats["groups"]["stone"]["edit_distance"]
    assert len(stone["values"]) == 3 and stone["mean"] == round(sum(stone["values"]) / 3, 4)
    assert len(set(stone["values"])) > 1 and stone["sd"] > 0  # random choices under three seeds differ
    assert "repeats: 3 runs (llm seeds 0..2)" in printed


def test_greedy_repeats_agree_and_their_spread_is_zero(capsys, tmp_path):
    code, _, _, data = eval_json(
        capsys, tmp_path, "--planner", "plan-and-solve", "--llm-stand-in", "copy-facts", "--repeats", "2"
    )
    assert code in (0, 1)
    for entry in data["repeats"]["groups"].values():
        assert all(entry[m]["sd"] == 0.0 for m in ("accuracy", "f1", "edit_distance"))


def test_every_repeat_has_a_run_file_and_a_second_call_resumes_them(capsys, tmp_path):
    runs = tmp_path / "r.jsonl"
    argv = ["--planner", "symbolic", "--repeats", "2", "--run", runs]
    code, _, _, first = eval_json(capsys, tmp_path, *argv)
    assert code == 0 and runs.is_file() and (tmp_path / "r.repeat2.jsonl").is_file()
    assert first["repeats"]["seeds"] == [None, None]  # a planner without a model has no seed to move on
    code, _, err, again = eval_json(capsys, tmp_path, *argv)
    assert code == 0 and err.count("resuming") == 2 and again["repeats"] == first["repeats"]


def test_repeats_with_a_memory_is_one_line_exit_2(capsys, tmp_path):
    code, out, err = run(
        capsys, "eval", "--dataset", "bar", "--planner", "bar", "--repeats", "2", "--memory", tmp_path / "m.db"
    )
    assert code == 2 and out == "" and one_line(err) and "--repeats" in err


def test_repeats_out_of_range_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, "eval", "--dataset", "bar", "--repeats", "0")
    assert code == 2 and one_line(err) and "--repeats" in err
