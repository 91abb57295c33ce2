"""Planners declare what they support; one check refuses the rest in one line (issue 54).

A toy planner shows that adding one is a module (here, a class) plus one registration: it is then listed,
built through the one factory, run by ``barsym plan``, and refused what it does not declare.
"""

from __future__ import annotations

import pytest

from barsym.model import Goal
from barsym.planner import make_planner, planner_names, register, registry
from barsym.planner.registry import FORWARD, Supports, Unsupported, check, forward_planners, llm_planners, supports
from barsym.planner.result import PlanResult
from barsym.sim import State
from cli_run import run

FORWARD_NAMES = ("deps", "cot", "reverse-chain", "self-refine", "tot", "plan-and-solve")


class ToyPlanner:
    """Asks the symbolic planner and relabels its plan: a planner as simple as one can be."""

    name = "toy"

    def __init__(self, kb, spec):
        self.inner = make_planner("symbolic", kb)
        self.facts = spec.llm.facts

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        result = self.inner.plan(goal)
        result.planner = self.name
        return result


#: a model planner that plans from the empty start only, with no facts and no temperature
TOY = Supports(facts=False, start_states=False, temperature=False)


@pytest.fixture(scope="module", autouse=True)
def toy():
    register("toy", ToyPlanner, TOY)
    yield
    del registry._registry["toy"]  # the other tests (the CLI reference) see the built-in planners only


def test_a_registered_planner_is_listed_built_and_run(kb, capsys):
    assert "toy" in planner_names() and supports("toy") == TOY and "toy" in llm_planners()
    planner = make_planner("toy", kb, llm_stand_in="first")
    assert planner.plan(Goal(item="stick")).planner == "toy[first]"
    assert planner.facts is False  # it offers no facts: its default is none
    code, out, err = run(capsys, "plan", "stick", "--planner", "toy", "--llm-stand-in", "first")
    assert code == 0 and "planner toy[first]" in out, err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--facts"], "the toy planner does not take --facts"),
        (["--temperature", "0.7"], "the toy planner does not take --temperature; the planners that do: bar,"),
        (["--start", "logs=2"], "the toy planner does not take a start state (--start, --inventory, --layer)"),
    ],
)
def test_what_a_planner_does_not_declare_is_one_line_exit_2(capsys, argv, said):
    code, out, err = run(capsys, "plan", "stick", "--planner", "toy", "--llm-stand-in", "first", *argv)
    assert code == 2 and out == "" and said in err and err.count("\n") == 1, err


def test_the_api_is_checked_in_the_same_place(kb):
    with pytest.raises(Unsupported, match="does not take --facts"):
        make_planner("toy", kb, facts=True)
    with pytest.raises(Unsupported, match="does not take a start state"):
        make_planner("toy", kb, llm_stand_in="first").plan(Goal(item="stick"), State.start({"logs": 1}))


def test_the_forward_planners_offer_no_facts_mode(kb, capsys):
    """Issue 52: a prompt that spells out the answer measures the prompt, not the model."""
    assert forward_planners() == FORWARD_NAMES and all(supports(n) == FORWARD for n in FORWARD_NAMES)
    for name in FORWARD_NAMES:
        code, _, err = run(capsys, "plan", "stick", "--planner", name, "--llm-stand-in", "first", "--facts")
        assert code == 2 and err.count("\n") == 1, err
        assert err.endswith(
            f"the {name} planner does not take --facts (a prompt that spells out the answer measures the prompt, "
            "not the model); the planners that do: bar, llm-only, bar-sc\n"
        )
        assert make_planner(name, kb, llm_stand_in="first", log=False).facts is None  # no facts unless asked
        assert make_planner(name, kb, llm_stand_in="first", log=False, facts=False).facts is None


def test_the_decomposers_take_no_facts_unless_asked(kb):
    """Issue 52: the taught model knows the game, so bar decomposes from its own knowledge by default."""
    for name in ("bar", "llm-only"):
        assert make_planner(name, kb, llm_stand_in="first", log=False).decomposer.prompts.facts is None
        assert make_planner(name, kb, llm_stand_in="first", log=False, facts=False).decomposer.prompts.facts is None
        assert make_planner(name, kb, llm_stand_in="first", log=False, facts=True).decomposer.prompts.facts


def test_a_planner_asking_no_model_is_not_refused_its_options(capsys):
    """symbolic asks no model: model options are named as ignored (a warning), as before."""
    check("symbolic", facts=True, temperature=True)
    code, out, err = run(capsys, "plan", "stick", "--planner", "symbolic", "--facts")
    assert code == 0 and "ignored: --facts" in err


def test_every_built_in_factory_names_a_function_that_is_there():
    """The built-ins import their module when first built: each names a planner factory that exists."""
    from barsym.planner.registry import Lazy, entry

    for name in llm_planners():
        if name == "toy":
            continue
        factory = entry(name).factory
        assert isinstance(factory, Lazy) and callable(factory.load()), name
        loaded = factory.load()
        assert getattr(loaded, "func", loaded).__module__ == f"barsym.reasoning.{factory.name.rsplit('.', 1)[0]}", name
