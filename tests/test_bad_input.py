"""What a hostile new user tried, and what barsym now says: one line on stderr, exit 2.

Each section is one finding of the probe: the input that used to end in a
traceback, a crash or a silently wrong answer, and the one clear line that
replaces it. Runs through ``barsym.cli.main`` (as tests/test_validate_cli.py
and tests/test_llm_cli.py do) except where only a fresh interpreter shows the
fault.
"""

from __future__ import annotations

import importlib
import json
import re

import pytest

from barsym.bar_io import PlanFormatError, loads_json, parse_plan
from barsym.cli import main
from barsym.kb import load_kb
from barsym.llm import IncompatibleServerError, LLMError, OpenAIHTTPBackend
from barsym.model import Goal
from barsym.planner import PlanContext, SymbolicDecomposer
from barsym.reasoning.grammars.reply_grammar import render_reply
from barsym.reasoning.prompts.few_shot import EXAMPLE_ROOT
from barsym.testing.fakes import asked
from cli_run import one_line, run
from loopback import ChatStub
from testdata import EXPERT_FILES

# ----------------------------------------------------------------- 1. JSON too deep, numbers too long

DEEP = "[" * 5000 + "]" * 5000
LONG_NUMBER = "9" * 5000


@pytest.mark.parametrize(
    "line, words",
    [
        (DEEP, "JSON nested too deeply"),
        ('{"type": ' + DEEP + "}", "JSON nested too deeply"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": ' + LONG_NUMBER + "}", "a number has more than"),
        ('{"type": [], "obj_name": "logs", "obj_num": 1}', "unknown step type []"),  # a list is not hashable
        ('{"type": {"a": 1}, "obj_name": "logs", "obj_num": 1}', "unknown step type {'a': 1}"),
    ],
)
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
            parse_plan('{"type": "mine", "obj_name": "logs", "obj_num": ' + value + "}", "x.jsonl")
        assert len(str(info.value)) < 200 and "characters)" in str(info.value)


def test_loads_json_names_where_and_how():
    assert loads_json('{"a": [1]}', "f") == {"a": [1]}
    with pytest.raises(PlanFormatError, match=r"^f:3: malformed JSON at column 6: Expecting"):
        loads_json('{"a" 1}', "f:3")
    with pytest.raises(PlanFormatError, match=r"^f: malformed JSON at line 2 column 1"):
        loads_json('{"a":\n}', "f")
    with pytest.raises(PlanFormatError, match="nested too deeply"):
        loads_json(DEEP, "f")


@pytest.mark.parametrize(
    "layout, words",
    [
        ("folder", "nested too deeply"),
        ("list", "a number has more than"),
    ],
)
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


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--temperature=-1"], "--temperature must be from 0 to 5, got '-1'"),
        (["--llm-timeout", "0"], "--llm-timeout must be from 0.1 to 3600"),
        (["--llm-seed", str(2**32)], "--llm-seed must be from 0 to 4294967295"),
        (["--llm-seed", "9" * 5000], "--llm-seed must be a whole number from 0 to 4294967295"),
    ],
)
def test_out_of_range_llm_options(capsys, argv, words):
    code, out, err = run(capsys, "plan", "stick", *argv)
    assert code == 2 and one_line(err) and words in err and len(err) < 300, err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["plan", "stick", "--count", "\u00b2"], "--count must be a whole number from 1 to"),  # '²'.isdigit() is True
        (["plan", "stick", "--count", "9" * 5000], "--count must be a whole number from 1 to"),
        (["validate", "--start", "logs=\u00b2", EXPERT_FILES[0]], "--start 'logs=\u00b2': expected ITEM=N"),
        (["validate", "--start", "logs=" + "9" * 5000, EXPERT_FILES[0]], "expected ITEM=N with N a whole number"),
        (["validate", "--start", "logs=99999999", EXPERT_FILES[0]], "from 0 to 23040"),
    ],
)
def test_counts_int_cannot_read_are_usage_errors(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and one_line(err) and words in err and len(err) < 300, err


# ----------------------------------------------------------------- 3. --goal-count without --goal


def test_goal_count_alone_counts_the_last_steps_item(capsys, tmp_path):
    """``--goal-count N`` alone was refused; it now holds each plan to N of its own last step's item, and the
    verdict line names that goal (so with several files no plan is held to a goal the user cannot see)."""
    plan = tmp_path / "p.jsonl"
    plan.write_text("mine 2 logs\ncraft 8 planks\n")
    code, out, err = run(capsys, "validate", "--goal-count", "8", plan)
    assert code == 0 and err == "" and "valid (2 steps, goal 8 planks)" in out
    diamond = next(p for p in EXPERT_FILES if p.stem == "diamond")  # ends "craft 1 diamond"
    code, out, _ = run(capsys, "validate", "--goal-count", "9", plan, diamond)
    assert code == 1 and "INVALID at the end (2 steps, goal 9 planks)" in out
    assert "INVALID at the end (15 steps, goal 9 diamond)" in out
    code, out, err = run(capsys, "score", "--goal-count", "8", plan, "--format", "json", "--scores", "simulator")
    assert code == 0 and err == "" and json.loads(out)["plans"][0]["goal"] == {"item": "planks", "count": 8}
    code, out, _ = run(capsys, "repair", "--goal-count", "9", plan, "--format", "json")
    assert json.loads(out)[0]["goal"] == {"item": "planks", "count": 9}


def test_goal_count_with_goal_still_counts(capsys, tmp_path):
    plan = tmp_path / "p.jsonl"
    plan.write_text(
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}\n{"type": "craft", "obj_name": "planks", "obj_num": 4}\n'
    )
    assert run(capsys, "validate", "--goal", "planks", "--goal-count", "4", plan)[0] == 0
    code, out, _ = run(capsys, "validate", "--goal", "planks", "--goal-count", "5", plan)
    assert code == 1 and "goal_not_reached" in out


# ----------------------------------------------------------------- 4. a URL that is not an OpenAI-compatible server


@pytest.fixture
def server():
    started = []

    def start(post, get=True):  # the n-th POST gets post(n, messages) -> (status, body)
        started.append(ChatStub(status=post, get=get))
        return started[-1]

    yield start
    for one in started:
        one.close()


def completion(text: str, usage: dict | None = None) -> bytes:
    usage = usage if usage is not None else {"prompt_tokens": 400, "completion_tokens": 9}
    return json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": usage}
    ).encode()


def oracle(messages: list[dict]) -> str:
    """The symbolic decomposer's answer to the goal of the conversation, as the model would write it."""
    kb = load_kb()
    count, _, item = asked(messages[-1]["content"]).partition(" ")
    return render_reply(
        SymbolicDecomposer(kb, prefer=kb.prefer).decompose(
            Goal(item=item, count=int(count)), PlanContext(kb, EXAMPLE_ROOT)
        )
    )


@pytest.mark.parametrize("get", [True, False], ids=["get-ok", "get-501"])
@pytest.mark.parametrize("planner", ["bar", "llm-only"])
@pytest.mark.parametrize("command", ["plan", "eval"])
def test_a_server_answering_501_to_every_post_is_one_line_exit_2(capsys, server, tmp_path, get, planner, command):
    stub = server(lambda n, m: (501, b""), get=get)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [
                {"task": "a", "group": "g", "object": "diamond_pickaxe"},
                {"task": "b", "group": "g", "object": "stone_axe"},
            ]
        )
    )
    head = ["plan", "diamond_pickaxe"] if command == "plan" else ["eval", "--dataset", tasks]
    code, out, err = run(capsys, *head, "--planner", planner, "--llm-url", stub.url)
    assert code == 2 and out == "" and one_line(err), err
    assert (
        f"barsym: error: {stub.url} is not an OpenAI-compatible server: POST /v1/chat/completions "
        "answered 501 Unsupported method ('POST'). Point the URL at a llama.cpp"
    ) in err
    assert stub.posts == 1  # no retry, no fallback: the first answer settles it


@pytest.mark.parametrize(
    "status, body, words",
    [
        (404, b'{"detail": "Not Found"}', 'answered 404 Not Found: {"detail": "Not Found"}'),
        (405, b"<html>Method Not Allowed</html>", "answered 405 Method Not Allowed."),
        (200, b"<html>a web page</html>", "answered with a body that is not JSON: '<html>a web page</html>'"),
        (200, b'{"result": "ok"}', "answered JSON without choices[0].message"),
        (200, b"[" * 5000, "answered with a body that is not JSON"),
    ],
)
def test_other_answers_that_are_not_the_api(capsys, server, status, body, words):
    stub = server(lambda n, m: (status, body))
    code, out, err = run(capsys, "plan", "stick", "--llm-url", stub.url)
    assert code == 2 and out == "" and one_line(err) and "is not an OpenAI-compatible server" in err
    assert words in err, err


def test_after_a_good_answer_the_same_replies_are_passing_errors(server):
    stub = server(lambda n, m: (200, completion("hi")) if n == 1 else (501, b""))
    backend = OpenAIHTTPBackend(stub.url, timeout=5)
    assert backend.complete([{"role": "user", "content": "x"}]).text == "hi"
    with pytest.raises(LLMError, match="HTTP 501") as info:
        backend.complete([{"role": "user", "content": "x"}])
    assert not isinstance(info.value, IncompatibleServerError)


def test_garbage_after_good_answers_is_a_fallback(capsys, server):
    stub = server(lambda n, m: (200, completion(oracle(m)) if n == 1 else b"<html>502 bad gateway</html>"))
    code, out, err = run(capsys, "plan", "diamond_pickaxe", "--llm-url", stub.url, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "valid", err
    assert data["stats"]["accepted_first_try"] == 1 and data["stats"]["fallbacks"] >= 1
    assert one_line(err) and "warning: the LLM backend failed" in err and "not JSON" in err


# ----------------------------------------------------------------- 4b. rates never above 100 %


def dies_after_first(n, messages):
    """The first goal gets a real answer, then the server is "not ready" for good (503: backend down)."""
    return (200, completion(oracle(messages))) if n == 1 else (503, b'{"detail": "loading"}')


def test_a_backend_that_dies_gives_rates_of_at_most_100_percent(capsys, server, tmp_path):
    stub = server(dies_after_first)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [{"task": "a", "group": "g", "object": "stick"}, {"task": "b", "group": "g", "object": "diamond_pickaxe"}]
        )
    )
    report = tmp_path / "eval.json"
    code, out, err = run(capsys, "eval", "--dataset", tasks, "--llm-url", stub.url, "--json", report)
    assert code == 0 and "warning: the LLM backend failed" in err
    summary = json.loads(report.read_text())["summary"]
    rates = [summary[k] for k in ("first_try_rate", "after_feedback_rate", "fallback_rate")]
    assert all(0 <= r <= 100 for r in rates) and sum(rates) == pytest.approx(100, abs=0.2), summary
    assert summary["totals"]["fallbacks"] > summary["totals"]["llm_goals"]  # the case that printed 39200 %
    assert (
        summary["not_asked"]
        == summary["totals"]["fallbacks"]
        - summary["totals"]["llm_goals"]
        + summary["totals"]["accepted_first_try"]
        + summary["totals"]["accepted_after_feedback"]
    )
    assert (
        f"goals given up without an LLM call (backend down, call budget spent, or the graph's only step "
        f"refused): {summary['not_asked']}, answered by the symbolic fallback" in out
    )
    assert "00.0 %" not in out.replace("100.0 %", "")


def test_plan_report_says_which_fallbacks_had_no_call(capsys, server):
    stub = server(dies_after_first)
    code, out, _ = run(capsys, "plan", "diamond_pickaxe", "--llm-url", stub.url)
    found = re.search(
        r"LLM \(graph mode\): \d+ calls for (\d+) goals .*; accepted first try (\d+), after feedback "
        r"(\d+), symbolic fallback (\d+) \((\d+) without a call\)",
        out,
    )
    assert code == 0 and found, out
    asked, first, after, fallbacks, without = map(int, found.groups())
    assert first == 1 and fallbacks > asked and without == fallbacks - (asked - first - after)


# ----------------------------------------------------------------- 5. token counts a server makes up


@pytest.mark.parametrize(
    "usage, bad",
    [
        ({"prompt_tokens": -5, "completion_tokens": 9}, "prompt_tokens=-5"),
        ({"prompt_tokens": 400, "completion_tokens": 2.5}, "completion_tokens=2.5"),
        ({"prompt_tokens": 10**30, "completion_tokens": 9}, "prompt_tokens=1000000000000000000000000000000"),
        ({"prompt_tokens": "lots", "completion_tokens": 9}, "prompt_tokens='lots'"),
        ({"prompt_tokens": 400, "completion_tokens": True}, "completion_tokens=True"),
        (
            {"prompt_tokens": 20, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 500}},
            "cached 500 > prompt_tokens 20",
        ),
    ],
)
def test_bad_usage_counts_are_not_counted_and_warned_once(server, usage, bad):
    stub = server(lambda n, m: (200, completion("hi", usage)))
    backend = OpenAIHTTPBackend(stub.url, timeout=5)
    with pytest.warns(RuntimeWarning, match="reported unusable token counts") as caught:
        reply = backend.complete([{"role": "user", "content": "x"}])
        backend.complete([{"role": "user", "content": "x"}])
    assert len(caught) == 1 and bad in str(caught[0].message)
    assert reply.text == "hi" and reply.prompt_tokens >= 0 and reply.completion_tokens >= 0
    assert reply.prompt_tokens <= 400 and reply.completion_tokens in (0, 9)
    assert reply.cached_prompt_tokens is None


def test_counts_servers_write_differently_are_read(server):
    usage = {"prompt_tokens": "400", "completion_tokens": 9.0, "prompt_tokens_details": {"cached_tokens": 0}}
    stub = server(lambda n, m: (200, completion("hi", usage)))
    reply = OpenAIHTTPBackend(stub.url, timeout=5).complete([{"role": "user", "content": "x"}])
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cached_prompt_tokens) == (400, 9, 0)


def test_the_cli_prints_bad_counts_as_one_warning_and_no_negative_totals(capsys, server):
    stub = server(lambda n, m: (200, completion(oracle(m), {"prompt_tokens": -400, "completion_tokens": -9})))
    code, out, err = run(capsys, "plan", "diamond_pickaxe", "--llm-url", stub.url)
    assert code == 0 and one_line(err), err
    assert err.startswith(
        f"barsym: warning: server {stub.url} reported unusable token counts (prompt_tokens=-400, completion_tokens=-9)"
    )
    assert "tokens: prompt 0 (evaluated 0, cached 0), completion 0" in out


# ----------------------------------------------------------------- 6. game versions without minecraft-data


@pytest.mark.parametrize("version", ["1.17.3", "1.99", "9.99", "21w07a"])
@pytest.mark.parametrize(
    "command",
    [
        ["plan", "stick", "--planner", "symbolic"],
        ["validate", EXPERT_FILES[0]],
        ["execute", EXPERT_FILES[0]],
        ["graph", "stick"],
        ["eval", "--planner", "symbolic", "--dataset", "."],
    ],
)
def test_versions_without_minecraft_data_are_refused_by_every_command(capsys, version, command):
    code, out, err = run(capsys, "--mc-version", version, *command)
    assert code == 2 and out == "" and one_line(err), err
    assert f"--mc-version: barsym has no data for Minecraft {version!r}; installed: 1.8 to 1.19.2" in err


def test_load_kb_refuses_them_too(monkeypatch):
    from barsym.kb import VersionNotSupportedError, default_data_dir, supported_versions

    monkeypatch.delenv("BARSYM_MINECRAFT_DATA", raising=False)
    assert {"1.8", "1.12.2", "1.16.5", "1.19.2"} <= set(supported_versions()) and "1.20.4" not in supported_versions()
    for data_dir in (None, default_data_dir()):
        with pytest.raises(VersionNotSupportedError, match="installed: 1.8 to 1.19.2"):
            load_kb("1.17.3", data_dir=data_dir)


# ----------------------------------------------------------------- 7. output files that cannot be written


@pytest.mark.parametrize(
    "target, words",
    [
        ("/nonexistent/dir/x.json", "folder /nonexistent/dir does not exist"),
        ("{tmp}", "is a folder; give the name of a file"),
        ("{tmp}/bad\0name.json", "not a usable file name"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["eval", "--planner", "symbolic", "--dataset", "{tasks}", "-o"],
        ["plan", "stick", "--planner", "symbolic", "-o"],
        ["graph", "stick", "-o"],
    ],
)
def test_unwritable_outputs_are_refused_before_the_work(capsys, tmp_path, monkeypatch, target, words, command):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "t", "group": "g", "object": "stick"}]))
    work = {"eval": "run_evaluation", "plan": "build_planner", "graph": "CraftGraph"}[command[0]]
    module = importlib.import_module(f"barsym.commands.{command[0]}")
    monkeypatch.setattr(module, work, lambda *a, **k: pytest.fail("the work started before the output check"))
    argv = [a.format(tasks=tasks) for a in command] + [target.format(tmp=tmp_path)]
    code, out, err = run(capsys, *argv)
    option = "-o"
    assert code == 2 and out == "" and one_line(err) and f"barsym: error: {option} " in err and words in err, err


def test_the_check_leaves_no_file_and_keeps_an_existing_one(capsys, tmp_path):
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    old.write_text("keep me")
    for target in (new, old):  # the dataset is missing: the run stops after the output check
        assert run(capsys, "eval", "--dataset", tmp_path / "missing.json", "--json", target)[0] == 2
    assert not new.exists() and old.read_text() == "keep me"


# ----------------------------------------------------------------- 8. control characters reach no terminal

ESC = "\x1b"


def test_an_item_name_with_escapes_is_shown_escaped(capsys):
    code, out, err = run(capsys, "plan", f"oak{ESC}[31mplanks")
    assert code == 2 and ESC not in err and "unknown item 'oak\\x1b[31mplanks'" in err


@pytest.mark.parametrize("json_output", [False, True])
def test_names_inside_a_plan_are_shown_escaped(capsys, tmp_path, json_output):
    plan = tmp_path / f"evil{ESC}]0;title\a.jsonl"
    plan.write_text(
        json.dumps({"type": "mine", "obj_name": f"lo{ESC}[2Jgs", "obj_num": 1, "tool": "\x9b31m"})
        + "\n"
        + json.dumps({"type": "craft", "obj_name": "planks\r\x00", "obj_num": 1})
        + "\n"
    )
    code, out, err = run(capsys, "validate", *(["--json"] if json_output else []), plan)
    assert code == 1
    for text in (out, err):
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in text), repr(text)
    if json_output:
        assert json.loads(out)[0]["goal"]["item"] == "planks\r\x00"  # JSON keeps the data, escaped by json
    else:
        assert "mine 1 lo\\x1b[2Jgs with \\x9b31m" in out and "evil\\x1b]0;title\\x07.jsonl" in out
        assert "planks\\x0d\\x00" in out


def test_escaping_keeps_layout_and_text():
    from barsym.redact import escape_controls

    assert escape_controls("a\tb\nc é 日本 \u2192") == "a\tb\nc é 日本 \u2192"
    assert escape_controls("\x1b\r\x7f\x85\udcff") == "\\x1b\\x0d\\x7f\\x85\\udcff"


def test_unrecognized_arguments_are_escaped_too(capsys):
    with pytest.raises(SystemExit) as info:
        main(["plan", "stick", f"{ESC}[2J"])
    _, err = capsys.readouterr()
    assert info.value.code == 2 and ESC not in err and "unrecognized arguments: \\x1b[2J" in err


def test_streams_are_restored_after_main(capsys):
    import sys

    before = sys.stdout, sys.stderr
    run(capsys, "graph", "stick")
    assert (sys.stdout, sys.stderr) == before


def test_progress_line_still_draws_and_escapes_task_names(monkeypatch):
    import io

    from barsym.commands import progress_line
    from barsym.commands.progress_line import TerminalProgress
    from barsym.redact import EscapedOutput

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress_line, "REFRESH", None)
    raw = Tty()
    progress = TerminalProgress(EscapedOutput(raw))  # rich draws on the raw stream, under barsym's escaping one
    progress.task(f"task 1/1 g/{ESC}[2Jx")

    class Stats:
        goals = llm_calls = accepted_first_try = accepted_after_feedback = fallbacks = 1

    from barsym.reasoning.calls.progress import Phase, ProgressEvent

    progress(ProgressEvent(Phase.GOAL, "1 stick", 1, 3, Stats()))
    progress.clear()
    assert "g/\\x1b[2Jx" in raw.getvalue() and f"{ESC}[2Jx" not in raw.getvalue()


# ----------------------------------------------------------------- 9. Ctrl-C at any moment


def test_ctrl_c_while_the_parser_imports_commands(capsys, monkeypatch):
    import importlib as real

    def interrupted(name, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(real, "import_module", interrupted)
    code, out, err = run(capsys, "plan", "stick")
    assert code == 130 and err == "barsym: interrupted\n" and out == ""


def test_ctrl_c_during_start_up_in_a_fresh_interpreter():
    """A real SIGINT while barsym imports its sub-commands (the console script's situation)."""
    import subprocess
    import sys

    script = (
        "import importlib, os, signal, sys\n"
        "from barsym.cli import main\n"
        "real = importlib.import_module\n"
        "def slow(name, *a, **k):\n"
        "    if name == 'barsym.commands.plan':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *a, **k)\n"
        "importlib.import_module = slow\n"
        "sys.exit(main(['plan', 'stick']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and done.stderr == "barsym: interrupted\n", done.stderr
    assert "Traceback" not in done.stderr


def test_cli_module_imports_nothing_heavy():
    import subprocess
    import sys

    script = (
        "import sys, barsym.cli\nprint(sorted(m for m in sys.modules if m.startswith('barsym') or m == 'argparse'))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "['barsym', 'barsym.cli', 'barsym.lazy_names']", done.stdout + done.stderr
