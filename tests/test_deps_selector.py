"""DEPS with a selector: each round's plan runs in the order the selector picks among the steps that can run.

A scripted model writes the plans. With ``order`` (the default) the loop is
what it was before selectors; with ``graph`` or ``horizon`` a bed's wool and
logs, which do not depend on each other, may be gathered in either order, and
the round's ticks and verdict are those of the order the selector chose.
"""

from __future__ import annotations

import json

import pytest

from barsym.llm import LLMOptions, ScriptedLLM
from barsym.model import Goal, Plan
from barsym.planner import make_planner
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.planner.selector import SELECTORS, plan_needs, trained_horizon
from barsym.reasoning.grammars.forward_plans import parse_plan_text
from barsym.reasoning.planners.forward.deps import DepsPlanner
from barsym.reasoning.planners.forward.stats import DepsSummary
from barsym.reasoning.spec import PlannerSpec
from barsym.sim import DeterministicWorld, State, StochasticWorld
from barsym.sim.execution import play
from barsym.sim.stochastic import derive_seed
from cli_run import run
from loopback import ChatStub

BED = Goal(item="white_bed", count=1)
#: wool first as written; the logs (and what is made of them) do not wait for it
WOOL_FIRST = "kill 3 white_wool\nmine 2 logs\ncraft 7 planks\ncraft 1 crafting_table\ncraft 1 white_bed\ndone"
PICKAXE = Goal(item="wooden_pickaxe", count=1)
NO_TABLE = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 wooden_pickaxe\ndone"
GOOD = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 crafting_table\ncraft 1 wooden_pickaxe\ndone"
WHY = "Crafting a wooden_pickaxe needs a crafting_table."


def deps(kb, replies, selector=None, world="stochastic", rounds=5):
    graph = graph_for(kb)
    options = {"graph": graph, "log": False, "facts": True, "deps_rounds": rounds, "feedback_world": world}
    options.update({} if selector is None else {"selector": selector})
    return DepsPlanner(kb, PlannerSpec.of("deps", options), ScriptedLLM(replies, LLMOptions(n_ctx=4096)))


def test_order_is_the_default_and_the_loop_is_what_it_was(kb):
    default = deps(kb, [NO_TABLE, WHY, GOOD]).plan(PICKAXE)
    ordered = deps(kb, [NO_TABLE, WHY, GOOD], selector="order").plan(PICKAXE)
    assert default.trace.to_dict() == ordered.trace.to_dict() and default.trace.lines() == ordered.trace.lines()
    assert "selector" not in ordered.trace.to_dict() and "selector" not in ordered.trace.lines()[0]
    assert all("order" not in r for r in ordered.trace.to_dict()["rounds"])
    world = StochasticWorld(kb)
    for r in ordered.trace.rounds:  # each round: its plan played as written, seeded from the round
        plan = Plan(steps=r.steps)
        episode = play(world, plan, derive_seed(0, r.number), PICKAXE, State(), world.default_budget(r.steps))
        assert (r.success, r.ticks) == (episode.success, episode.ticks) and r.order is None
    assert ordered.stats.section(DepsSummary).selector == "order"


@pytest.mark.parametrize("selector, first", [("graph", 1), ("horizon", 1)])
@pytest.mark.parametrize("world", ["deterministic", "stochastic"])
def test_independent_sub_goals_run_in_the_order_the_selector_picks(kb, selector, first, world):
    planner = deps(kb, [WOOL_FIRST], selector=selector, world=world, rounds=0)
    result = planner.plan(BED)
    r = result.trace.rounds[0]
    assert r.success and sorted(r.order) == list(range(5)) and r.order[0] == first and r.reordered
    # the round is the episode of the plan in that order: same seed, same ticks
    reordered = Plan(steps=tuple(r.steps[i] for i in r.order))
    episode = play(planner.world, reordered, derive_seed(0, 0), BED, State(), planner.world.default_budget(r.steps))
    assert episode.success and episode.ticks == r.ticks
    assert result.plan.steps == r.steps  # the plan returned is the model's, as written
    assert result.stats.section(DepsSummary).selector == selector and result.trace.to_dict()["selector"] == selector
    lines = result.trace.lines()
    assert f"picked by the {selector} selector" in lines[0]
    assert f"run as steps {', '.join(str(i + 1) for i in r.order)}" in lines[1]
    assert result.trace.to_dict()["rounds"][0]["order"] == [i + 1 for i in r.order]


def test_a_failure_is_described_by_the_descriptor_and_fed_back(kb):
    planner = deps(kb, [NO_TABLE, WHY, GOOD], selector="horizon", world="deterministic")
    backend = planner.gateway.backend
    result = planner.plan(PICKAXE)
    first = result.trace.rounds[0]
    assert not first.success and "step 4, craft 1 wooden_pickaxe, failed" in first.description
    assert "crafting_table" in first.description and first.description in backend.calls[1].last_user_message
    assert result.trace.success_round == 1 and result.validation.valid


def test_an_unreadable_plan_fails_on_the_goal_as_before(kb):
    result = deps(kb, ["banana bread"], selector="graph", world="deterministic", rounds=0).plan(PICKAXE)
    r = result.trace.rounds[0]
    assert r.steps == () and r.order == () and "goal needs 1" in r.description


def test_a_plans_needs_are_read_off_the_plan_as_written(kb):
    world = DeterministicWorld(kb)
    symbolic = symbolic_planner(kb).plan(BED)
    derived = {(a, b) for a, b, _ in plan_needs(world, symbolic.plan.steps)}
    assert derived == {(a, b) for a, b, _ in symbolic.needs}  # the same needs the symbolic planner knows
    steps = parse_plan_text(NO_TABLE, kb).steps  # the pickaxe cannot be made: it waits for every step before it
    assert {(a, b) for a, b, _ in plan_needs(world, steps)} >= {(0, 3), (1, 3), (2, 3)}
    iron = symbolic_planner(kb).plan(Goal(item="iron_pickaxe")).plan.steps
    dig, again = [i for i, s in enumerate(iron) if s.type.moves][:2]  # a layer move is a barrier
    needs = {(a, b) for a, b, _ in plan_needs(world, iron)}
    assert all((i, dig) in needs for i in range(dig)) and all((dig, j) in needs for j in range(dig + 1, again + 1))


def test_the_horizon_model_is_fitted_once_per_world_and_reproducibly(kb):
    world = StochasticWorld(kb)
    model = trained_horizon(world)
    assert trained_horizon(StochasticWorld(kb)) is model  # kept for the process
    assert trained_horizon(DeterministicWorld(kb)) is not model


def test_the_registry_takes_the_selector_and_refuses_a_bad_one(kb):
    planner = make_planner(
        "deps",
        kb,
        backend=ScriptedLLM([WOOL_FIRST]),
        selector="graph",
        deps_rounds=0,
        feedback_world="deterministic",
        log=False,
    )
    assert planner.selector == "graph" and planner.plan(BED).trace.rounds[0].order[0] == 1
    assert make_planner("deps", kb, backend=ScriptedLLM([]), log=False).selector == "order"
    with pytest.raises(ValueError, match="--selector: Input should be 'order', 'random', 'graph' or 'horizon'"):
        deps(kb, [], selector="best")
    assert SELECTORS == ("order", "random", "graph", "horizon")


@pytest.fixture
def stub():
    server = ChatStub(lambda _: WOOL_FIRST)
    yield server
    server.close()


def test_plan_shows_the_selector_and_the_order(capsys, stub):
    code, out, err = run(
        capsys,
        "plan",
        "white_bed",
        "--planner",
        "deps",
        "--selector",
        "graph",
        "--llm-url",
        stub.url,
        "--feedback-world",
        "deterministic",
    )
    assert code == 0, err
    assert "picked by the graph selector" in out and "run as steps 2, 1, 3, 4, 5" in out
    code, out, err = run(
        capsys,
        "plan",
        "white_bed",
        "--planner",
        "deps",
        "--selector",
        "graph",
        "--llm-url",
        stub.url,
        "--format",
        "json",
    )
    assert json.loads(out)["stats"]["deps"]["selector"] == "graph"


@pytest.mark.parametrize("command", ["plan", "eval"])
def test_a_bad_selector_is_one_line_exit_2(capsys, tmp_path, command):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "t", "group": "MT1", "object": "stick"}]))
    head = ["plan", "stick"] if command == "plan" else ["eval", "--dataset", tasks]
    code, out, err = run(capsys, *head, "--planner", "deps", "--selector", "best")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "--selector must be one of order, random, graph, horizon, got 'best'" in err


def test_a_selector_for_another_planner_is_named_as_ignored(capsys):
    code, out, err = run(capsys, "plan", "stick", "--planner", "symbolic", "--selector", "horizon")
    assert code == 0 and "the symbolic planner asks no model; ignored: --selector" in err
    from barsym.consistency import ConsistencyConfig
    from barsym.kb import load_kb
    from barsym.reasoning.options import DepsOptions, PlannerLLMOptions
    from barsym.reasoning.spec import choose

    llm, config = PlannerLLMOptions(), ConsistencyConfig()
    spec, ignored = choose("cot", load_kb(), llm, config, DepsOptions(selector="graph"))
    assert (
        "selector" not in spec.run_options()
        and spec.deps.selector is None
        and ignored == ("executes no plan", [(DepsOptions, "selector")])
    )
    code, out, err = run(
        capsys, "plan", "stick", "--planner", "cot", "--selector", "graph", "--llm-stand-in", "copy-facts"
    )
    assert "the cot planner executes no plan; ignored: --selector" in err


def test_eval_workers_carry_the_selector(capsys, stub, tmp_path):
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            [
                {"task": "bed", "group": "MT3", "object": "white_bed"},
                {"task": "bed2", "group": "MT3", "object": "white_bed"},
            ]
        )
    )
    reports = []
    for workers in ("1", "2"):
        report = tmp_path / f"{workers}.json"
        code, out, err = run(
            capsys,
            "eval",
            "--dataset",
            tasks,
            "--planner",
            "deps",
            "--selector",
            "horizon",
            "--rounds",
            "0",
            "--llm-url",
            stub.url,
            "--workers",
            workers,
            "--json",
            report,
            "--quiet",
        )
        assert "Traceback" not in err, err
        assert "ready steps picked by the horizon selector" in out
        reports.append(json.loads(report.read_text()))
    for data in reports:
        stats = [t["stats"]["deps"] for t in data["tasks"].values()]
        assert stats and all(s["selector"] == "horizon" for s in stats)
    one, two = ([t["stats"]["deps"] for t in r["tasks"].values()] for r in reports)
    assert one == two
