"""``barsym plan|eval --planner deps|cot``: bad options, a model that never helps, one that never answers.

No model is loaded: bad options fail before any backend is made, and the
"models" are stub OpenAI servers on 127.0.0.1. Every case is one clear line
(exit 2) or a recorded failure (exit 1): never a traceback, never a hang.
"""

from __future__ import annotations

import json

import pytest

from cli_run import one_line, run
from loopback import chat_stubs


@pytest.fixture
def server():
    with chat_stubs() as start:
        yield start


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--planner", "deps", "--deps-rounds", "-1"], "--deps-rounds must be from 0 to 20"),
        (["--planner", "deps", "--deps-rounds", "1000000"], "--deps-rounds must be from 0 to 20"),
        (["--planner", "deps", "--deps-rounds", "five"], "--deps-rounds must be a whole number from 0 to 20"),
        (
            ["--planner", "deps", "--feedback-world", "nether"],
            "--feedback-world must be one of deterministic, stochastic",
        ),
        (["--planner", "bar", "--feedback-world", "deterministic"], "--feedback-world applies to --planner deps only"),
        (["--planner", "cot", "--llm-mode", "vocab"], "the cot planner's grammar is always the game's vocabulary"),
        (["--planner", "deps", "--llm-url", "http://127.0.0.1:9"], "cannot reach the LLM server"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "eval"])
def test_bad_settings_are_one_line_exit_2(capsys, tmp_path, argv, words, command):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "t", "group": "MT1", "object": "stick"}]))
    head = ["plan", "stick"] if command == "plan" else ["eval", "--dataset", tasks]
    code, out, err = run(capsys, *head, *argv)
    assert code == 2 and out == "" and one_line(err) and words in err, err


def test_a_model_that_never_answers_usefully_is_a_shown_and_recorded_failure(capsys, server, tmp_path):
    s = server("I like turtles")
    code, out, err = run(
        capsys, "plan", "stick", "--planner", "deps", "--rounds", "2", "--llm-url", s.url, "--format", "json"
    )
    assert code == 1 and "Traceback" not in err
    data = json.loads(out)
    assert data["verdict"] == "invalid" and data["steps"] == []
    # round 1 wrote round 0's (empty) plan again: replanning once more would too, so DEPS stops and says so
    assert [r["round"] for r in data["trace"]["rounds"]] == [0, 1]
    assert data["trace"]["stopped"] == "no_change" and all(not r["success"] for r in data["trace"]["rounds"])
    assert data["trace"]["problem"] == "round 1 wrote the plan of round 0 again"
    assert data["stats"]["deps"]["success_round"] is None and s.posts == 3  # 2 plans, 1 explanation
    code, out, err = run(capsys, "plan", "stick", "--planner", "deps", "--rounds", "0", "--llm-url", s.url)
    assert code == 1 and "no steps: the planner wrote no usable plan" in out and "round 0: 0 steps" in out


def test_a_model_that_never_answers_costs_two_timeouts_and_one_line(capsys, server):
    s = server("mine 1 logs\ndone", hang=True)
    code, out, err = run(capsys, "plan", "stick", "--planner", "deps", "--llm-url", s.url, "--llm-timeout", "0.5")
    assert code == 1 and out == "" and one_line(err) and "LLM backend failed" in err, err
    assert s.posts == 2


def test_eval_records_the_failures_per_task_and_goes_on(capsys, server, tmp_path):
    s = server("craft 1 stick\ndone")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [{"task": "a", "group": "MT1", "object": "stick"}, {"task": "b", "group": "MT1", "object": "planks"}]
        )
    )
    report = tmp_path / "report.json"
    code, out, err = run(capsys, "eval", "--dataset", tasks, "--planner", "cot", "--llm-url", s.url, "--json", report)
    assert code == 1 and "2 plan(s) cannot be executed" in err and "Traceback" not in err
    data = json.loads(report.read_text())
    assert all(t["verdict"] == "invalid" for t in data["tasks"].values())
    assert data["summary"]["totals"]["llm_calls"] == 2


def test_deps_writes_bar_json_lines(capsys, server):
    s = server("mine 1 logs\ncraft 4 planks\ndone")
    code, out, err = run(
        capsys,
        "plan",
        "planks",
        "--planner",
        "deps",
        "--llm-url",
        s.url,
        "--format",
        "bar",
        "--feedback-world",
        "deterministic",
    )
    assert code == 0, err
    assert [json.loads(line)["obj_name"] for line in out.splitlines()] == ["logs", "planks"]


def test_eval_executes_deps_plans_in_a_world_per_group(capsys, server, tmp_path):
    s = server("mine 1 logs\ncraft 4 planks\ndone")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [{"task": "p", "group": "MT1", "object": "planks"}, {"task": "s", "group": "MT1", "object": "stone_stairs"}]
        )
    )
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        tasks,
        "--dialect",
        "deps",
        "--planner",
        "deps",
        "--llm-url",
        s.url,
        "--rounds",
        "1",
        "--world",
        "stochastic",
        "--runs",
        "5",
        "--quiet",
    )
    assert out.startswith(
        "planner deps (vocab mode)"
    )  # deps writes under the vocabulary grammar, whatever --llm-mode says
    assert "execution in the stochastic world (5 runs per plan" in out and "Traceback" not in err
    assert code == 1 and "1 plan(s) cannot be executed" in err  # the stairs need more than planks
    assert "DEPS: the goal reached in its own feedback episodes at round 0: 1; never: 1 of 2" in out
