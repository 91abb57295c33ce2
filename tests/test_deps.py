"""DEPS' loop and the chain-of-thought planner with a scripted model: what is fed back, rounds, context, failures.

The deterministic world executes the plans here, so a test knows exactly which
step fails and what the descriptor says about it.
"""

from __future__ import annotations

import pytest

from barsym.llm import BackendTimeoutError, LLMOptions, ScriptedLLM
from barsym.llm.grammar import lint_gbnf
from barsym.llm.grammar_match import compile_grammar
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import Vocabulary, fold_repeats, parse_plan_text, render_plan
from barsym.reasoning.planners.forward.cot import CotPlanner, split_line
from barsym.reasoning.planners.forward.deps import DepsPlanner, StopReason
from barsym.reasoning.planners.forward.stats import CotSummary, DepsSummary
from barsym.reasoning.prompts import deps_prompts as prompts
from barsym.reasoning.spec import PlannerSpec

GOAL = Goal(item="wooden_pickaxe", count=1)
NO_TABLE = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 wooden_pickaxe\ndone"
GOOD = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 crafting_table\ncraft 1 wooden_pickaxe\ndone"
WHY = "Crafting a wooden_pickaxe needs a crafting_table."


def no_table(n: int) -> str:
    """A plan that fails as NO_TABLE does, different in every round (a round that changes nothing stops DEPS)."""
    return NO_TABLE.replace("mine 3 logs", f"mine {3 + n} logs")


def deps(kb, replies, rounds=5, n_ctx=4096):
    backend = ScriptedLLM(replies, LLMOptions(n_ctx=n_ctx))
    graph = graph_for(kb)
    options = {"graph": graph, "log": False, "facts": True, "deps_rounds": rounds, "feedback_world": "deterministic"}
    planner = DepsPlanner(kb, PlannerSpec.of("deps", options), backend)
    return planner, backend


def cot(kb, graph, backend) -> CotPlanner:
    return CotPlanner(kb, PlannerSpec.of("cot", {"graph": graph, "log": False, "facts": True}), backend)


def test_the_description_and_explanation_are_fed_back_and_the_repaired_plan_wins(kb):
    planner, backend = deps(kb, [NO_TABLE, WHY, GOOD])
    result = planner.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 3
    first, explain, replan = backend.calls
    description = result.trace.rounds[0].description
    assert "step 4, craft 1 wooden_pickaxe, failed" in description and "crafting_table" in description
    assert description in explain.last_user_message  # the descriptor's words, as the execution world gives them
    assert explain.grammar != first.grammar  # free text, not a plan
    contents = [m["content"] for m in replan.messages]
    assert NO_TABLE in contents and WHY in contents and description in " ".join(contents)
    assert result.trace.stopped is StopReason.SUCCEEDED and result.trace.success_round == 1
    assert result.validation.valid and [str(s) for s in result.plan.steps][3] == "craft 1 crafting_table"
    assert result.stats.llm.accepted_after_feedback == 1 and result.stats.section(DepsSummary).success_round == 1


def test_round_zero_plans_once_and_explains_nothing(kb):
    planner, backend = deps(kb, [NO_TABLE], rounds=0)
    result = planner.plan(GOAL)
    assert len(backend.calls) == 1 and backend.remaining == 0
    assert result.trace.stopped is StopReason.ROUNDS_USED and result.trace.rounds[0].explanation is None
    assert not result.validation.valid and result.stats.llm.unanswered == 1


def test_every_round_is_used_when_every_plan_fails(kb):
    rounds = 3
    planner, backend = deps(kb, [r for n in range(rounds) for r in (no_table(n), WHY)] + [NO_TABLE], rounds=rounds)
    result = planner.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 2 * rounds + 1
    assert [r.number for r in result.trace.rounds] == [0, 1, 2, 3]
    assert result.trace.stopped is StopReason.ROUNDS_USED and result.trace.plan_after(3) == result.plan.steps
    assert result.trace.plan_after(1) == result.trace.rounds[1].steps != result.plan.steps


def test_a_long_dialogue_leaves_out_the_oldest_rounds_and_every_prompt_fits(kb):
    planner, _ = deps(kb, [])
    task = {"role": "user", "content": prompts.task_message(GOAL, None, planner.facts)}
    full = planner.plan_budget.tokens([*planner.prefix, task])
    # room for the prefix, the task and about two rounds of dialogue, not six
    replies = [r for n in range(5) for r in (no_table(n), WHY)] + [NO_TABLE]
    planner, backend = deps(kb, replies, rounds=5, n_ctx=full + 360 + 48 + 220)
    result = planner.plan(GOAL)
    assert len(result.trace.rounds) == 6 and result.trace.stopped is StopReason.ROUNDS_USED
    assert max(r.dropped_rounds for r in result.trace.rounds) >= 2
    for call in backend.calls:
        budget = planner.plan_budget if call.max_tokens == 360 else planner.explain_budget
        assert budget.fits(call.messages)
    assert backend.calls[-1].messages[len(planner.prefix)]["content"].startswith("Goal: 1 wooden_pickaxe")


def test_a_context_too_small_for_the_prompt_stops_without_a_call(kb):
    planner, backend = deps(kb, [], n_ctx=600)
    result = planner.plan(GOAL)
    assert backend.calls == [] and result.trace.stopped is StopReason.CONTEXT_FULL and not result.plan.steps
    assert not result.validation.valid


def test_a_model_that_never_answers_usefully_is_a_recorded_failure(kb):
    planner, backend = deps(kb, ["banana bread", "", "craft 1 unobtainium_block\ndone"], rounds=1)
    result = planner.plan(GOAL)
    assert backend.remaining == 0
    assert [len(r.steps) for r in result.trace.rounds] == [0, 0]
    assert result.trace.rounds[0].unreadable and "goal needs 1" in result.trace.rounds[0].description
    assert result.trace.rounds[0].explanation is None  # an empty explanation is none
    assert not result.validation.valid and result.stats.llm.unreadable >= 2


def test_a_backend_that_keeps_failing_ends_the_loop_with_a_planning_error(kb):
    planner, backend = deps(kb, [BackendTimeoutError, BackendTimeoutError])
    with pytest.raises(PlanningError, match="LLM backend failed"):
        planner.plan(GOAL)
    assert len(backend.calls) == 2
    with pytest.raises(PlanningError):  # down for the rest of the process: no third call
        planner.plan(GOAL)
    assert len(backend.calls) == 2


def test_bad_rounds_are_refused_by_the_planner(kb):
    with pytest.raises(ValueError, match="--deps-rounds must be from 0 to 20"):
        deps(kb, [], rounds=-1)
    with pytest.raises(ValueError, match="--deps-rounds must be from 0 to 20"):
        deps(kb, [], rounds=21)


def test_the_registry_builds_deps_and_cot_on_a_given_backend(kb):
    backend = ScriptedLLM([GOOD, "mine 1 logs; inventory: 1 logs\ndone"])
    result = make_planner("deps", kb, backend=backend, feedback_world="deterministic", log=False).plan(GOAL)
    assert result.planner == "deps" and result.validation.valid
    cot = make_planner("cot", kb, backend=backend, log=False).plan(Goal(item="logs", count=1))
    assert cot.planner == "cot" and cot.validation.valid


def test_the_plan_grammar_is_clean_and_admits_the_examples(kb):
    vocab = Vocabulary(kb, graph_for(kb))
    grammar = vocab.plan_grammar()
    assert lint_gbnf(grammar) == []
    compiled = compile_grammar(grammar)
    for text in (GOOD, render_plan(symbolic_planner(kb).plan(Goal(item="iron_pickaxe")).plan.steps)):
        assert compiled.start().advance(text + "") is not None, text
    assert compiled.start().advance("craft 1 banana") is None


def test_a_server_reply_without_the_grammar_is_read_leniently(kb):
    read = parse_plan_text("1. mine 3 logs.\n2) craft 9 planks\nthen relax\ncraft 2 stick\ndone\nmine 9 dirt", kb)
    assert [str(s) for s in read.steps] == ["mine 3 logs", "craft 9 planks", "craft 2 stick"]
    assert read.ended and len(read.unreadable) == 1


def test_a_plan_ends_at_the_step_that_makes_its_goal(kb):
    past = "mine 3 logs\ncraft 1 crafting_table\nmine 1 cobblestone\ncraft 1 furnace\ndone"
    read = parse_plan_text(past, kb, goal=Goal(item="crafting_table", count=1))
    assert [str(s) for s in read.steps] == ["mine 3 logs", "craft 1 crafting_table"]
    assert read.ended and read.past_goal == 2
    assert parse_plan_text(past, kb).past_goal == 0 and len(parse_plan_text(past, kb).steps) == 4  # no goal: all read
    short = parse_plan_text(
        "craft 4 planks\ncraft 4 planks\ncraft 8 planks\ndone", kb, goal=Goal(item="planks", count=8)
    )
    assert len(short.steps) == 3 and short.past_goal == 0  # 4 planks is not yet the 8 asked for
    family = parse_plan_text("mine 3 oak_log\ncraft 12 planks\ndone", kb, goal=Goal(item="logs", count=3))
    assert [str(s) for s in family.steps] == ["mine 3 oak_log"] and family.past_goal == 1  # a member counts
    moves = parse_plan_text("dig down with wooden_pickaxe\nmine 1 iron_ore\ndone", kb, goal=Goal(item="iron_ore"))
    assert len(moves.steps) == 2 and moves.past_goal == 0


def test_cot_and_deps_plans_stop_at_the_goal_and_say_how_many_lines_were_left(kb):
    reply = (
        "mine 3 logs; inventory: 3 logs\ncraft 9 planks; inventory: 9 planks\n"
        "craft 2 stick; inventory: 4 stick, 8 planks\ncraft 1 furnace; inventory: 1 furnace\ndone"
    )
    graph = graph_for(kb)
    planner = cot(kb, graph, ScriptedLLM([reply]))
    result = planner.plan(Goal(item="stick", count=2))
    assert [str(s) for s in result.plan.steps] == ["mine 3 logs", "craft 9 planks", "craft 2 stick"]
    assert result.validation.valid and result.trace.to_dict()["past_goal"] == 1
    assert any("1 line(s) after it not read" in line for line in result.trace.lines())
    planner, _ = deps(kb, [GOOD.replace("\ndone", "\ncraft 1 furnace\ndone")], rounds=0)
    result = planner.plan(GOAL)
    assert result.validation.valid and result.trace.rounds[0].past_goal == 1
    assert result.trace.rounds[0].to_dict()["past_goal"] == 1 and "after the goal's step" in result.trace.lines()[1]


def test_cot_writes_steps_and_inventories_and_the_trace_compares_them(kb):
    reply = (
        "mine 3 logs; inventory: 3 logs\ncraft 9 planks; inventory: 12 planks\n"
        "craft 2 stick; inventory: 4 stick, 9 planks\ndone"
    )
    graph = graph_for(kb)
    backend = ScriptedLLM([reply])
    planner = cot(kb, graph, backend)
    result = planner.plan(Goal(item="stick", count=2))
    assert [str(s) for s in result.plan.steps] == ["mine 3 logs", "craft 9 planks", "craft 2 stick"]
    assert result.trace.written == ["3 logs", "12 planks", "4 stick, 9 planks"]
    assert result.trace.actual[2] == "10 planks, 4 stick" and result.trace.agreeing == 2  # 9: the model's slip
    assert "; inventory: " in backend.calls[0].grammar and result.validation.valid
    assert split_line("craft 2 stick; inventory: 4 stick") == ("craft 2 stick", "4 stick")


def test_cot_folds_a_step_the_model_writes_again_at_once_but_keeps_moves(kb):
    reply = (
        "mine 3 logs; inventory: 3 logs\ncraft 9 planks; inventory: 12 planks\n"
        "craft 1 crafting_table; inventory: 1 crafting_table, 8 planks\n"
        "craft 1 crafting_table; inventory: 2 crafting_table, 4 planks\n"
        "craft 1 crafting_table; inventory: 3 crafting_table\n"
        "craft 2 stick; inventory: 4 stick\ndone"
    )
    graph = graph_for(kb)
    planner = cot(kb, graph, ScriptedLLM([reply]))
    result = planner.plan(Goal(item="stick", count=2))
    assert [str(s) for s in result.plan.steps] == [
        "mine 3 logs",
        "craft 9 planks",
        "craft 1 crafting_table",
        "craft 2 stick",
    ]
    assert result.trace.written == ["3 logs", "12 planks", "1 crafting_table, 8 planks", "4 stick"]
    assert result.trace.folded == 2 and result.stats.section(CotSummary).folded_repeats == 2
    assert result.trace.to_dict()["folded_repeats"] == 2 and "2 repeated line(s) folded" in result.trace.lines()[0]

    moves = "dig down with wooden_pickaxe\ndig down with wooden_pickaxe\nmine 1 iron_ore with stone_pickaxe\ndone"
    read, folded = fold_repeats(parse_plan_text(moves, kb))
    assert folded == 0 and len(read.steps) == 3  # two dig downs in a row go two layers down


def test_through_a_server_deps_and_self_refine_size_their_prompts_to_their_own_context(kb):
    """A server's client is shared by the process's planners, made with the first one's settings (2,048
    tokens); DEPS and self-refine hold their prompts to the context they would load a model with, not to it
    (DEPS through a server stopped "context full" before round 0 on BAR's long tasks)."""
    from barsym.llm import LLMOptions
    from barsym.llm.http.backend import OpenAIHTTPBackend
    from barsym.reasoning.planners.forward.deps import context_for
    from barsym.reasoning.planners.forward.self_refine import context_for as refine_context

    server = OpenAIHTTPBackend("http://127.0.0.1:9", options=LLMOptions(n_ctx=2048))
    deps = make_planner("deps", kb, backend=server, log=False)
    assert deps.plan_budget.n_ctx == context_for(5, False) > 2048  # deps takes no facts (issue 52)
    refine = make_planner("self-refine", kb, backend=server, log=False)
    assert refine.n_ctx == refine_context(3, False) > 2048
