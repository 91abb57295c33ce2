"""One flag convention over every sub-command's parser (nested ones like ``memory show`` too).

What it checks, for each parser ``build_parser`` makes:

- a command that prints a result takes ``--format`` (and nothing prints JSON on a switch of its own:
  ``--json`` exists only as a deprecated, hidden alias);
- seeds are ``--llm-seed`` (sampling), ``--world-seed`` (execution) or ``--train-seed`` (``distill``'s data and
  training); ``--seed`` only as a hidden alias;
- rounds are ``--repair-rounds`` (state consistency), ``--deps-rounds`` (DEPS) or ``--refine-rounds``
  (Self-Refine); ``--rounds`` only hidden;
- ``-o`` is ``--output`` wherever it exists;
- every help text (description, group titles, options) names only options that command has, or
  options of another command it names (``barsym eval --run``).

The old spellings still work, with one deprecation line on stderr.
"""

from __future__ import annotations

import argparse
import json
import re

import pytest

from barsym.cli import build_parser
from barsym.commands.options import Deprecated
from cli_run import run

EXAMPLE = "examples/diamond_pickaxe.jsonl"

#: the commands that print a result (what --format chooses the shape of)
RESULTS = {
    "validate",
    "execute",
    "plan",
    "eval",
    "score",
    "repair",
    "graph",
    "logs",
    "datasets",
    "memory show",
}  # memory stats prints its counts as JSON, the one shape it has
MENTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: "barsym eval --run", "barsym plan --record": options of the command named, not of this one
OTHER_COMMAND = re.compile(r"barsym [a-z]+(?: [a-z]+)?(?: [A-Z.]+)*(?: --[a-z][a-z0-9-]*(?: [A-Z]+)?)+")


def walk(parser, path=()):
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))


ROOT = build_parser()
PARSERS = dict(walk(ROOT))
TOP = {s for a in ROOT._actions for s in a.option_strings}


def visible(parser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions if a.help != argparse.SUPPRESS for s in a.option_strings}


def hidden(parser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions if a.help == argparse.SUPPRESS for s in a.option_strings}


def test_the_walk_reaches_every_command():
    assert {"plan", "eval", "memory", "memory show", "memory build", "completion"} <= set(PARSERS)


@pytest.mark.parametrize("path", sorted(p for p in PARSERS if p))
def test_the_convention(path):
    parser = PARSERS[path]
    shown, old = visible(parser), hidden(parser)
    if path in RESULTS:
        assert "--format" in shown, f"barsym {path} prints a result but has no --format"
    for spelling in ("--json", "--seed", "--rounds"):
        assert spelling not in shown, f"barsym {path}: {spelling} is not the convention"
        if spelling in old:
            assert isinstance(old[spelling], Deprecated), f"barsym {path}: {spelling} must be a deprecated alias"
    seeds = {s for s in shown if s.endswith("seed")}
    assert seeds <= {"--llm-seed", "--world-seed", "--train-seed"}, f"barsym {path}: {seeds}"
    assert {s for s in shown if s.endswith("rounds")} <= {"--repair-rounds", "--deps-rounds", "--refine-rounds"}
    if "-o" in shown:
        assert "--output" in shown["-o"].option_strings, f"barsym {path}: -o must mean --output"


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_help_names_only_options_the_command_has(path):
    parser = PARSERS[path]
    mine = {s for a in parser._actions for s in a.option_strings} | TOP
    texts = [parser.description or ""] + [g.title or "" for g in parser._action_groups]
    texts += [a.help or "" for a in parser._actions if a.help != argparse.SUPPRESS]
    foreign = {m for t in texts for m in MENTION.findall(OTHER_COMMAND.sub("", t))} - mine
    assert foreign == set(), f"barsym {path} --help names options it does not have: {sorted(foreign)}"


@pytest.mark.parametrize(
    "argv, note",
    [
        (["validate", "--json", EXAMPLE], "--json is deprecated, use --format json"),
        (["execute", "--json", "--runs", "2", "--seed", "4", EXAMPLE], "--seed is deprecated, use --world-seed"),
        (["score", "--json", "--scores", "simulator", EXAMPLE], "--json is deprecated, use --format json"),
    ],
)
def test_old_spellings_still_work_with_a_note(capsys, argv, note):
    code, out, err = run(capsys, *argv)
    assert code in (0, 1) and f"barsym: {note}\n" in err
    json.loads(out)  # what --format json prints


def test_old_seed_means_what_it_meant(capsys):
    new = run(capsys, "execute", "--format", "json", "--runs", "3", "--world-seed", "9", EXAMPLE)
    old = run(capsys, "execute", "--format", "json", "--runs", "3", "--seed", "9", EXAMPLE)
    assert new[1] == old[1] and new[2] == "" and old[2] == "barsym: --seed is deprecated, use --world-seed\n"


def test_eval_output_dash_is_stdout_not_a_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "2", "-o", "-")
    assert code == 0 and json.loads(out)["tasks"] and not (tmp_path / "-").exists()
    argv = ["eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "2", "--quiet"]  # no per-task lines
    code, old, err = run(capsys, *argv, "--json", "-")
    assert json.loads(old)["tasks"] and err == "barsym: --json is deprecated, use -o/--output\n"
    assert not (tmp_path / "-").exists()


def test_eval_format_json_prints_the_results_alone(capsys):
    code, out, err = run(
        capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "1", "--format", "json"
    )
    assert code == 0 and "overall" in json.loads(out)


def test_old_rounds_go_to_the_rounds_they_meant(capsys):
    code, out, err = run(capsys, "repair", EXAMPLE, "--rounds", "0")
    assert code == 2 and "--repair-rounds must be from 1 to 20" in err
    assert err.startswith("barsym: --rounds is deprecated, use --repair-rounds\n")
