"""The forward planners' facts: every item of the task, in plan order, on by default, off with --no-facts."""

from __future__ import annotations

from barsym.llm import LLMOptions, ScriptedLLM
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.planners.forward.cot import CotPlanner
from barsym.reasoning.planners.forward.deps import DEFAULT_ROUNDS, MAX_CONTEXT, DepsPlanner, context_for
from barsym.reasoning.prompts.plan_facts import HEADER, PlanFacts
from barsym.reasoning.spec import PlannerSpec
from barsym.sim import State
from cli_run import run


def test_the_facts_follow_the_symbolic_plan_first_made_first(kb):
    facts = PlanFacts(symbolic_planner(kb))
    lines = facts.lines(Goal(item="iron_pickaxe", count=1))
    heads = [line.split(" needs ")[0].split(" (")[0] for line in lines]
    assert heads[0] == "mine 4 logs"
    assert heads[-1] == "craft 1 iron_pickaxe"
    assert heads.index("smelt 3 iron_ingot") < heads.index("craft 1 iron_pickaxe")
    assert heads.index("craft 1 furnace") < heads.index("smelt 3 iron_ingot")
    assert any(line.startswith("dig down with wooden_pickaxe") for line in lines)
    assert len(lines) == len(set(lines))  # each item once


def test_a_start_inventory_changes_the_facts_and_an_unreachable_goal_has_none(kb):
    facts = PlanFacts(symbolic_planner(kb))
    held = facts.text(Goal(item="stick", count=4), State.start({"planks": 2}))
    assert held.startswith(HEADER) and "mine" not in held  # the planks are there: nothing to gather
    assert facts.text(Goal(item="beacon", count=1)) == ""


def test_cot_and_deps_tell_the_model_the_facts_unless_told_not_to(kb):
    graph = graph_for(kb)
    goal = Goal(item="wooden_pickaxe", count=1)
    for facts in (True, False):
        backend = ScriptedLLM(["mine 1 logs; inventory: 1 logs\ndone"])
        CotPlanner(kb, PlannerSpec.of("cot", {"graph": graph, "log": False, "facts": facts}), backend).plan(goal)
        assert (HEADER in backend.calls[0].last_user_message) is facts
        backend = ScriptedLLM(["mine 1 logs\ndone", "I do not know.", "mine 1 logs\ndone"], LLMOptions(n_ctx=8192))
        options = {"graph": graph, "log": False, "facts": facts, "deps_rounds": 1, "feedback_world": "deterministic"}
        DepsPlanner(kb, PlannerSpec.of("deps", options), backend).plan(goal)
        assert (HEADER in backend.calls[0].last_user_message) is facts


def test_deps_sizes_its_context_for_its_rounds_and_facts():
    assert context_for(DEFAULT_ROUNDS, True) > context_for(DEFAULT_ROUNDS, False) >= 2048
    assert context_for(0, False) == 2048
    assert context_for(20, True) == MAX_CONTEXT


def test_no_facts_is_a_planner_option_and_ignored_with_a_warning_elsewhere(capsys):
    code, out, err = run(capsys, "plan", "stick", "--planner", "symbolic", "--no-facts")
    assert code == 0 and "ignored: --no-facts" in err
