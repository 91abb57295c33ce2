"""CoT without facts reasons backward first (each step with what it takes, the last step first), then writes
the plan: the reasoning is read off the simulator and the rule book, the grammar admits it, and only the plan
after ``plan:`` is played."""

from __future__ import annotations

from barsym.distill.oracle import admitted
from barsym.llm import ScriptedLLM
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import render_plan
from barsym.reasoning.planners.forward.cot import CotPlanner
from barsym.reasoning.planners.forward.cot_needs import PLAN_MARK, split_reply, thought_lines
from barsym.reasoning.planners.forward.deps import DepsPlanner
from barsym.reasoning.spec import PlannerSpec

GOAL = Goal(item="stone_bricks", count=1)


def planner(kb, replies):
    spec = PlannerSpec.of("cot", {"graph": graph_for(kb), "log": False, "facts": False})
    return CotPlanner(kb, spec, ScriptedLLM(replies))


def test_the_reasoning_is_the_plan_backward_with_what_each_step_took(kb):
    plan = symbolic_planner(kb).plan(GOAL).plan
    lines = thought_lines(kb, plan.steps)
    heads = [line.split(":")[0].split(" (")[0] for line in lines[::-1]]
    assert lines is not None and heads == [str(s) for s in plan.steps]
    by_head = dict(line.split(": ", 1) for line in lines if ": " in line)
    # what the simulator saw each step consume (fuel included), then station, tool and layer, in the decomposer's order
    assert by_head["smelt 4 stone (4)"] == "4 cobblestone, 3 planks, 1 furnace"
    assert by_head["craft 1 furnace"] == "8 cobblestone, 1 crafting_table"
    # a step that makes what the lines above took shows their counts, in their order, when they add up
    assert by_head["mine 12 cobblestone with wooden_pickaxe (4 + 8)"] == "1 wooden_pickaxe, layer 1"
    assert by_head["dig down with wooden_pickaxe"] == "1 wooden_pickaxe"
    assert lines[-1] == "mine 3 logs (3)"  # nothing taken: no colon


def test_a_plan_that_cannot_run_has_no_reasoning(kb):
    plan = symbolic_planner(kb).plan(GOAL).plan
    assert thought_lines(kb, plan.steps[1:]) is None


def test_the_grammar_admits_the_reasoning_then_the_plan_and_only_the_plan_is_played(kb):
    plan = symbolic_planner(kb).plan(GOAL).plan
    reply = "\n".join([*thought_lines(kb, plan.steps), PLAN_MARK, render_plan(plan.steps)])
    cot = planner(kb, [reply])
    assert [m["role"] for m in cot.prefix] == ["system"]  # no worked example: it would spell out recipes
    assert admitted(reply, cot.grammar)
    assert not admitted(render_plan(plan.steps), cot.grammar)  # the reasoning is not optional
    result = cot.plan(GOAL)
    assert result.plan.steps == plan.steps and result.validation.valid
    assert list(result.trace.reasoning) == split_reply(reply)[0]
    assert result.trace.to_dict()["reasoning"][0].startswith("craft 1 stone_bricks: 4 stone")
    assert "reasoning backward" in "\n".join(result.trace.lines())


def test_a_reply_without_the_mark_is_read_whole(kb):
    assert split_reply("mine 3 logs\ndone") == ([], "mine 3 logs\ndone")


def test_deps_round_0_reasons_first_and_a_replan_is_the_plan_alone(kb):
    """Without facts DEPS' round 0 is cot's reply (reasoning, then the plan); the dialogue keeps the plan only,
    and the replan after a failure is asked under the plain plan grammar."""
    plan = symbolic_planner(kb).plan(GOAL).plan
    broken = [s for s in plan.steps if s.item != "crafting_table"]
    reasoning = thought_lines(kb, plan.steps)
    first = "\n".join([*reasoning, PLAN_MARK, render_plan(broken)])
    backend = ScriptedLLM([first, "The plan never crafts a crafting_table.", render_plan(plan.steps)])
    options = {"graph": graph_for(kb), "log": False, "facts": False, "feedback_world": "deterministic"}
    deps = DepsPlanner(kb, PlannerSpec.of("deps", options), backend)
    assert [m["role"] for m in deps.prefix] == ["system"]
    result = deps.plan(GOAL)
    assert result.trace.success_round == 1 and list(result.trace.reasoning) == reasoning
    grammars = [call.grammar for call in backend.calls]
    assert grammars[0] == deps.first_grammar and grammars[2] == deps.grammar != deps.first_grammar
    replan_prompt = backend.calls[2].messages
    assert replan_prompt[2] == {"role": "assistant", "content": render_plan(broken)}  # the plan, not the reasoning
    assert "reasoned backward" in "\n".join(result.trace.lines())
