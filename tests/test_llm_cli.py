"""``barsym plan`` / ``barsym eval`` with the LLM planners: bad input and faults, through cli.main.

No model is loaded here: bad model files fail before llama.cpp sees them, and
servers are tiny stdlib stubs on 127.0.0.1 (a symbolic "oracle", one that never
answers, one that sends garbage or empty replies). Every case must end in one
clear line or a recorded fallback: never a traceback, never a hang.
"""

from __future__ import annotations

import json
import os

import pytest

from barsym.kb import load_kb
from barsym.model import Goal
from barsym.planner import PlanContext, SymbolicDecomposer, layer_goal
from barsym.reasoning.grammars.reply_grammar import render_reply
from barsym.reasoning.prompts.few_shot import EXAMPLE_ROOT
from barsym.testing.fakes import asked
from cli_run import one_line, run
from loopback import chat_stubs


@pytest.fixture
def stub():
    with chat_stubs() as start:
        yield start


def oracle_reply(messages):
    kb = load_kb()
    symbolic = SymbolicDecomposer(kb, prefer=kb.prefer)
    text = asked(messages[-1]["content"])
    count, _, item = text.partition(" ")
    goal = layer_goal(int(item)) if count == "layer" else Goal(item=item, count=int(count))
    return render_reply(symbolic.decompose(goal, PlanContext(kb, EXAMPLE_ROOT)))


# ----------------------------------------------------------------- bad settings: one line, exit 2


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--model", "/nonexistent/model.gguf"], "does not exist"),
        (["--llm-url", "http://127.0.0.1:9"], "cannot reach the LLM server at http://127.0.0.1:9"),
        (["--llm-url", "not a url"], "base_url must look like http://host:port"),
        (["--model", "x.gguf", "--llm-url", "http://127.0.0.1:9"], "not both"),
        (["--max-retries", "-1"], "--max-retries must be from 0 to 20"),
        (["--max-retries", "two"], "--max-retries must be a whole number"),
        (["--threads", "0"], "--threads must be from 1 to 512"),
        (["--temperature", "hot"], "--temperature must be a number"),
        (["--retry-temperature", "-0.5"], "--retry-temperature must be from 0 to 5"),
        (["--adapter", "none", "--llm-url", "http://127.0.0.1:9"], "--adapter is for the in-process model"),
        (["--adapter", "none", "--llm-stand-in", "first"], "--llm-stand-in replaces the model; drop --adapter"),
        (["--adapter", "/nonexistent/adapter.gguf"], "--adapter /nonexistent/adapter.gguf: no such file"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "eval"])
def test_unusable_llm_settings_are_one_line_exit_2(capsys, tmp_path, argv, words, command):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "t", "group": "g", "object": "stick"}]))
    head = ["plan", "stick"] if command == "plan" else ["eval", "--dataset", tasks]
    code, out, err = run(capsys, *head, "--planner", "bar", *argv)
    assert code == 2 and out == "" and one_line(err) and words in err, err


def test_random_bytes_model_is_one_line_exit_2(capsys, tmp_path):
    pytest.importorskip("llama_cpp")
    model = tmp_path / "random.gguf"
    model.write_bytes(os.urandom(4096))
    code, out, err = run(capsys, "plan", "stick", "--model", model)
    assert code == 2 and out == "" and one_line(err) and "is not a GGUF model" in err


def test_env_var_pointing_nowhere_is_one_line_exit_2(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("BARSYM_MODEL", str(tmp_path / "typo.gguf"))
    monkeypatch.delenv("BARSYM_LLM_URL", raising=False)
    code, out, err = run(capsys, "plan", "stick", "--planner", "llm-only")
    assert code == 2 and one_line(err) and "$BARSYM_MODEL" in err


# ----------------------------------------------------------------- faults during planning: recorded fallback


def test_bar_through_a_server(capsys, stub):
    server = stub(oracle_reply)
    code, out, err = run(capsys, "plan", "wooden_pickaxe", "--llm-url", server.url)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("Plan for 1 wooden_pickaxe: 5 steps, planner bar, validator: valid")
    assert "[llm]" in out and "LLM (graph mode):" in out and "accepted first try" in out
    assert server.posts > 0


def test_a_server_that_stops_answering_costs_two_timeouts(capsys, stub):
    server = stub(oracle_reply, hang=True)
    code, out, err = run(
        capsys, "plan", "stone_pickaxe", "--llm-url", server.url, "--llm-timeout", "0.5", "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "valid" and server.posts == 2
    assert {p for step in data["steps"] for p in step["provenance"]} <= {"symbolic-fallback", "context", "graph"}
    assert data["stats"]["backend_errors"] == 2 and "within 0.5s" in data["stats"]["backend_down"]
    assert one_line(err) and "warning: the LLM backend failed" in err


# (a server whose every answer is not JSON is not the API at all: exit 2, see tests/test_bad_input.py)
@pytest.mark.parametrize("reply", [lambda m: "", lambda m: "I am a language model, I cannot play games."])
def test_garbage_or_empty_replies_become_symbolic_fallbacks(capsys, stub, reply):
    server = stub(reply)
    code, out, _ = run(capsys, "plan", "stick", "--llm-url", server.url, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "valid"
    assert {p for step in data["steps"] for p in step["provenance"]} <= {"symbolic-fallback", "context", "graph"}
    assert data["stats"]["fallbacks"] >= 1


def test_llm_only_shows_a_plan_that_cannot_run(capsys, stub):
    server = stub(lambda m: "craft 1 stick: 1 logs" if asked(m[-1]["content"]) == "1 stick" else "mine 1 logs")
    # vocab mode: the grammar admits this wrong recipe (a real graph-mode grammar would not)
    code, out, err = run(
        capsys, "plan", "stick", "--planner", "llm-only", "--llm-url", server.url, "--llm-mode", "vocab"
    )
    assert code == 1 and "validator: invalid" in out and "cannot run: fails at step 2" in out
    assert "used unchecked 2" in out and "Traceback" not in err


def test_eval_reports_llm_counters(capsys, stub, tmp_path):
    server = stub(oracle_reply)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps([{"task": "a", "group": "g", "object": "stick"}, {"task": "b", "group": "g", "object": "furnace"}])
    )
    report = tmp_path / "eval.json"
    code, out, err = run(capsys, "eval", "--dataset", tasks, "--llm-url", server.url, "--json", report)
    assert code == 0, err
    assert out.startswith("planner bar (graph mode)")
    assert "executable plans (validator): 2/2 (100.0 %)" in out and "accepted first try 100.0 %" in out
    summary = json.loads(report.read_text())["summary"]
    assert summary["executable_rate"] == 100.0 and summary["fallback_rate"] == 0.0
    assert summary["per_task"]["llm_calls"] > 0 and set(summary["seconds_per_task"]) >= {"median", "max"}
