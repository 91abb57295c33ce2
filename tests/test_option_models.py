"""The option models: one range for the library and the command line, unknown keys refused, one line per error."""

from __future__ import annotations

import pytest

from barsym.consistency import ConsistencyConfig
from barsym.llm.settings import ModelSettings
from barsym.planner import make_planner
from barsym.sim.options import ExecutionOptions
from cli_run import one_line, run

EXAMPLE = "examples/diamond_pickaxe.jsonl"


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", EXAMPLE, "--layer", "²"],
        ["plan", "stick", "--layer", "²"],
        ["plan", "stick", "--planner", "symbolic", "--layer", "٣"],
    ],
)
def test_a_superscript_layer_is_one_line_naming_layer(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and one_line(err) and err.startswith("barsym: error: --layer must be a whole number"), err
    assert "--memory" not in err


@pytest.mark.parametrize(
    "argv, line",
    [
        (["score", EXAMPLE, "--scores", "simulator", "--k", "0"], "--k must be from 1 to 50, got '0'"),
        (["repair", EXAMPLE, "--k", "51"], "--k must be from 1 to 50, got '51'"),
        (["plan", "stick", "--temperature", "nan"], "--temperature must be a finite number from 0 to 5, got 'nan'"),
        (
            ["plan", "stick", "--anchors", "random"],
            "--anchors must be one of step-scoring, sliding-window, got 'random'",
        ),
        (["execute", EXAMPLE, "--runs", "0"], "--runs must be from 1 to 100000, got '0'"),
        (
            ["plan", "stick", "--model", "m.gguf", "--llm-url", "http://x"],
            "give either --model (in-process) or --llm-url",
        ),
    ],
)
def test_range_errors_are_one_line_naming_the_flag(capsys, argv, line):
    code, out, err = run(capsys, *argv)
    assert code == 2 and one_line(err) and line in err and "validation error" not in err, err


def test_the_library_has_the_same_ranges():
    for bad in ({"k": 51}, {"k": 0}, {"t": 11}, {"rounds": 21}):
        with pytest.raises(ValueError):
            ConsistencyConfig(**bad)
    with pytest.raises(ValueError):
        ModelSettings(seed=2**32)
    with pytest.raises(ValueError):
        ExecutionOptions(runs=0)
    with pytest.raises(ValueError, match="extra"):
        ConsistencyConfig(window=3)


def test_the_registry_refuses_an_unknown_option_in_one_line(kb):
    with pytest.raises(TypeError) as info:
        make_planner("bar", kb, temprature=0.5, log=False)
    message = str(info.value)
    assert "\n" not in message and message.startswith("the bar planner takes no option 'temprature'")
    with pytest.raises(TypeError, match="no option 'deps_rounds'"):
        make_planner("cot", kb, deps_rounds=2)
    assert make_planner("symbolic", kb, validator=None, log=False).name == "symbolic"  # what callers hand over


def test_only_the_options_given_reach_the_planner(capsys, monkeypatch):
    from barsym.commands import planner_arguments  # plan builds its planner with the registry's one factory

    seen = {}

    def build(kb, spec):  # the one typed spec the registry is handed, as a run file keeps it
        seen.update(spec.run_options())
        raise ZeroDivisionError

    monkeypatch.setattr(planner_arguments, "build", build)
    with pytest.raises(ZeroDivisionError):
        run(capsys, "plan", "stick", "--planner", "bar", "--t", "4", "--no-fallback")
    assert seen["t"] == 4 and seen["fallback"] is False
    assert not {"anchors", "scores", "k", "repairer", "rounds", "deps_rounds", "selector"} & set(seen)
    assert seen["facts"] is False  # bar's default (no facts), resolved so that a run file's header says it
    seen.clear()
    with pytest.raises(ZeroDivisionError):
        run(capsys, "plan", "stick", "--planner", "bar-sc", "--no-facts", "--score-method", "digit")
    assert seen["facts"] is False and seen["score_method"] == "digit"
