"""A light command starts light: ``plan --planner symbolic`` and ``validate`` load a fraction of barsym.

The CLI makes only the parser of the command it runs, the packages load their names on first use
(``barsym.llm``, ``barsym.consistency``, ``barsym.memory``), and the model side of the planner options
(:mod:`barsym.commands.llm_options`) is imported only for a planner that asks a model. Each case runs
``barsym.cli.main`` in a fresh interpreter and lists the modules loaded when it returns; the time this
saves is measured by ``bench/bench_start.py`` (docs/results/start-time.md), not asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from testdata import REPO

#: the most barsym modules a light command may load (issue 36; 140 before it)
MOST = 60
RUN = (
    "import json, sys; from barsym.cli import main; code = main(sys.argv[2:]); "
    "json.dump({'code': code, 'modules': sorted(sys.modules)}, open(sys.argv[1], 'w'))"
)
EXAMPLE = REPO / "examples" / "diamond_pickaxe.jsonl"


def loaded(tmp_path, *argv) -> tuple[int, set[str]]:
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(out), *map(str, argv)], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(out.read_text(encoding="utf-8"))
    return seen["code"], set(seen["modules"])


@pytest.mark.parametrize(
    "argv",
    [("plan", "stick", "--planner", "symbolic"), ("validate", EXAMPLE)],
    ids=lambda a: a[0],
)
def test_a_light_command_loads_at_most_60_barsym_modules_and_no_model(tmp_path, argv):
    code, modules = loaded(tmp_path, *argv)
    assert code == 0
    ours = sorted(m for m in modules if m == "barsym" or m.startswith("barsym."))
    assert len(ours) <= MOST, f"{len(ours)} barsym modules: {ours}"
    assert {"numpy", "llama_cpp", "networkx"} & modules == set()  # the crafting graph is barsym's own dicts
    assert {"barsym.commands.llm_options", "barsym.llm.llamacpp", "barsym.eval"} & modules == set()
    assert "barsym.commands.eval" not in modules  # the other commands' parsers are not made


def test_an_llm_planner_still_gets_the_model_side(tmp_path):
    """The same command with a planner that asks a model loads what the light path leaves out (here
    refused at the server URL: the point is which modules the refusal was reached through)."""
    argv = ("plan", "stick", "--llm-url", "http://127.0.0.1:9/v1", "--llm-timeout", "1")
    code, modules = loaded(tmp_path, *argv)
    assert code == 2
    assert {"barsym.reasoning.calls.backends", "barsym.reasoning.planners.backward.llm_planners"} <= modules


def test_importing_the_llm_package_loads_no_backend():
    """``barsym.llm``'s backends load on first use of their names; the package itself is light."""
    code = (
        "import sys, barsym.llm as llm; before = set(sys.modules); llm.ScriptedLLM; "
        "print(sorted(m for m in before if m.startswith(('barsym.llm.', 'numpy', 'llama_cpp')))); "
        "print('barsym.llm.fake' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr
    first, after = done.stdout.splitlines()
    assert first == "['barsym.llm.base']" and after == "True"


def test_the_parser_of_one_command_parses_its_line_as_the_full_parser_does():
    from barsym.cli import build_parser

    line = ["--mc-version", "1.16.5", "plan", "stick", "--planner", "symbolic", "--count", "2"]
    one, full = build_parser(line), build_parser()
    mine, theirs = vars(one.parse_args(line)), vars(full.parse_args(line))
    assert {k: v for k, v in mine.items() if k != "parser"} == {k: v for k, v in theirs.items() if k != "parser"}
    assert list(one._subparsers._group_actions[0].choices) == ["plan"]
    everything = build_parser(["--help", "plan"])  # the top-level help lists every command
    assert list(everything._subparsers._group_actions[0].choices) == list(
        theirs["parser"]._subparsers._group_actions[0].choices
    )


@pytest.mark.parametrize(
    "argv",
    [("plan", "stick", "--planner", "symbolic"), ("validate", EXAMPLE)],
    ids=lambda a: a[0],
)
def test_a_light_command_loads_no_pydantic(tmp_path, argv):
    """Issue 54: the step, goal and plan are plain records, and the planner options' pydantic models are not
    made for a line that sets none of them (:func:`barsym.cli.plain_args`)."""
    code, modules = loaded(tmp_path, *argv)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")) == []


PLAIN_LINES = [
    ["plan", "stick", "--planner", "symbolic"],
    ["plan", "--planner=symbolic", "stick", "--count=3", "-q"],
    [
        "--mc-version",
        "1.16.5",
        "plan",
        "stick",
        "--planner",
        "symbolic",
        "--count",
        "2",
        "--format",
        "json",
        "--start",
        "logs=1",
        "--start",
        "stick=2",
        "--layer",
        "1",
        "--rules",
        "crafting",
        "--memory",
        "m.db",
        "--record",
        "-o",
        "out.json",
        "--dialect",
        "deps",
    ],
    ["validate", "a.jsonl", "b.jsonl", "--goal", "stick", "--goal-count", "2", "--format", "json", "--quiet"],
]


@pytest.mark.parametrize("line", PLAIN_LINES, ids=lambda line: " ".join(line[:3]))
def test_a_line_that_sets_no_option_model_parses_as_the_full_parser_reads_it(line):
    """The plain parser's namespace is the full one's without the option models' arguments, and those the full
    parser adds are all unset (a switch at its default): what the planner reads is the same."""
    from barsym.cli import build_parser, plain_args

    parser = build_parser()
    plain, full = plain_args(line), parser.parse_args(line)
    assert plain is not None
    command = parser._subparsers._group_actions[0].choices[full.command]
    mine, theirs = vars(plain), vars(full)
    only_full = set(theirs) - set(mine)
    assert set(mine) - set(theirs) == {"option_models"}
    assert {k: v for k, v in mine.items() if k not in ("parser", "option_models")} == {
        k: v for k, v in theirs.items() if k not in only_full | {"parser"}
    }
    assert {k: theirs[k] for k in only_full} == {k: command.get_default(k) for k in only_full}


@pytest.mark.parametrize(
    "line",
    [
        ["plan", "stick"],  # bar asks a model
        ["plan", "stick", "--planner", "symbolic", "--co", "2"],  # an abbreviation: ambiguous in the full parser
        ["plan", "stick", "--planner", "symbolic", "--temperature", "0.5"],  # an option model's (warned as ignored)
        ["plan", "stick", "--planner", "symbolic", "--consistency"],
        ["plan", "stick", "--planner", "symbolic", "-h"],
        ["plan", "stick", "--planner", "nosuch"],
        ["plan", "--planner", "symbolic"],  # no item: the full parser's message
        ["plan", "stick", "--planner", "symbolic", "--", "x"],
        ["plan", "stick", "extra", "--planner", "symbolic"],
        ["validate", "a.jsonl", "--text", "plan.txt"],  # a plan in prose asks the model
        ["--version"],
        ["eval", "--dataset", "bar"],  # a command with no plain parse
    ],
    ids=lambda line: " ".join(line),
)
def test_any_other_line_is_left_to_the_full_parser(line):
    from barsym.cli import plain_args

    assert plain_args(line) is None


def test_a_planner_built_without_its_spec_plans_as_the_one_built_from_it(kb):
    from barsym.model import Goal
    from barsym.planner.registry import build, build_plain
    from barsym.reasoning.spec import PlannerContext, PlannerSpec
    from barsym.sim import State

    held = State.start({"iron_ingot": 3, "oak_log": 2})
    cases = [(None, item, None) for item in ("diamond_pickaxe", "bucket", "torch", "golden_apple")]
    for rules, item, start in [*cases, ("crafting", "bucket", held), ("crafting", "stick", held)]:
        plain = build_plain(kb, "symbolic", rules)
        full = build(kb, PlannerSpec(planner="symbolic", context=PlannerContext(rules=rules)))
        assert type(plain) is type(full)
        assert plain.plan(Goal(item=item), start).plan == full.plan(Goal(item=item), start).plan
    assert build_plain(kb, "bar") is None  # a planner that asks a model is made from its spec
