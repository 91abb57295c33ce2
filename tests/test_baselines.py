"""The four added baselines of BAR's table with a scripted model: what each asks, in what order, when it stops.

Reverse Chain, Self-Refine, Tree of Thoughts and Plan-and-Solve
(:mod:`barsym.reasoning.planners.forward.baseline_loop` and one module each). A
:class:`~barsym.llm.ScriptedLLM` answers, so a test knows every reply and can
check every request: its grammar, what its last message asks, and where the
loop ends -- including when it ends without a complete plan.
"""

from __future__ import annotations

import pytest

from barsym.llm import BackendTimeoutError, LLMOptions, ScriptedLLM
from barsym.llm.grammar import lint_gbnf
from barsym.llm.grammar_match import compile_grammar
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.planner.stats import PlanStats
from barsym.reasoning.planners.forward.baseline_loop import StopReason
from barsym.reasoning.planners.forward.plan_and_solve import subtask_grammar
from barsym.reasoning.planners.forward.stats import BaselineSummary
from barsym.reasoning.planners.forward.tree_of_thoughts import propose_grammar
from barsym.reasoning.prompts import baseline_prompts as prompts
from cli_run import run

GOAL = Goal(item="wooden_pickaxe", count=1)
STEPS = ["mine 3 logs", "craft 9 planks", "craft 2 stick", "craft 1 crafting_table", "craft 1 wooden_pickaxe"]
GOOD = "\n".join(STEPS) + "\ndone"
NO_TABLE = "\n".join(s for s in STEPS if "crafting_table" not in s) + "\ndone"
WHY = "wrong: The plan never crafts a crafting_table."


def planner(kb, name, replies, **options):
    backend = ScriptedLLM(replies, LLMOptions(n_ctx=8192))
    return make_planner(name, kb, backend=backend, log=False, **options), backend


def with_facts(kb, name, **options):
    """The planner class's facts mode, which the registry no longer offers for a forward planner (issue 54):
    reached past its check, to pin what the mode did for the runs made with it."""
    from barsym.planner.registry import entry
    from barsym.reasoning.spec import PlannerSpec

    return entry(name).factory(kb, PlannerSpec.of(name, {"log": False, "facts": True, **options}))


def texts(result) -> list[str]:
    return [str(s) for s in result.plan.steps]


# ---- reverse-chain --------------------------------------------------------------------------------------------


def test_reverse_chain_asks_once_and_plays_the_chain_from_its_last_line(kb):
    p, backend = planner(kb, "reverse-chain", ["\n".join(reversed(STEPS)) + "\ndone"])
    result = p.plan(GOAL)
    assert len(backend.calls) == 1 and backend.remaining == 0
    call = backend.calls[0]
    assert call.last_user_message.startswith("Goal: 1 wooden_pickaxe")
    assert "Known" not in call.last_user_message  # no facts: the forward planners offer none (issue 54)
    assert call.grammar == p.plan_grammar
    assert texts(result) == STEPS and result.validation.valid
    assert result.trace.stopped is StopReason.FINISHED and result.trace.complete
    assert result.stats.section(BaselineSummary).method == "reverse-chain" and result.stats.llm.llm_calls == 1


def test_a_chain_that_never_reaches_done_says_it_is_unfinished(kb):
    p, _ = planner(kb, "reverse-chain", ["craft 1 wooden_pickaxe\ncraft 2 stick"])
    result = p.plan(GOAL)
    assert texts(result) == ["craft 2 stick", "craft 1 wooden_pickaxe"]
    assert result.trace.stopped is StopReason.UNFINISHED and not result.trace.complete
    assert result.stats.llm.unanswered == 1 and result.stats.section(BaselineSummary).complete is False
    assert "no complete plan within its budget" in result.trace.lines()[0]


def test_a_backend_that_never_answers_is_a_planning_error_not_a_hang(kb):
    p, backend = planner(kb, "reverse-chain", [BackendTimeoutError("slow"), BackendTimeoutError("slow")])
    with pytest.raises(PlanningError, match="reverse-chain planner got no plan"):
        p.plan(GOAL)
    assert len(backend.calls) == 2  # a failed call is asked once more, then the backend is down


# ---- self-refine ----------------------------------------------------------------------------------------------


def test_self_refine_plans_asks_for_feedback_refines_and_stops_at_correct(kb):
    p, backend = planner(kb, "self-refine", [NO_TABLE, WHY, GOOD, "correct"])
    result = p.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 4
    plan, feedback, refine, check = backend.calls
    assert plan.grammar == refine.grammar == p.plan_grammar
    assert feedback.grammar == check.grammar == prompts.FEEDBACK_GRAMMAR
    assert feedback.last_user_message == prompts.ASK_FEEDBACK and refine.last_user_message == prompts.ASK_REFINE
    said = [m["content"] for m in refine.messages]
    assert NO_TABLE in said and WHY in said  # the earlier plan and the model's own feedback stay in view
    assert result.trace.stopped is StopReason.FINISHED and texts(result) == STEPS and result.validation.valid
    assert [e.kind for e in result.trace.entries] == ["plan", "feedback", "refined plan", "feedback"]


def test_self_refine_stops_after_its_rounds_with_the_last_plan(kb):
    p, backend = planner(kb, "self-refine", [NO_TABLE, WHY, NO_TABLE, WHY, GOOD], refine_rounds=2)
    result = p.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 5
    assert result.trace.stopped is StopReason.ROUNDS_USED and result.trace.rounds == 2
    assert texts(result) == STEPS  # the last plan written, though no feedback said correct


def test_the_summary_says_how_many_rounds_ran_not_only_the_budget(kb):
    """It said "3 refinement round(s); stopped: finished" when the feedback said correct in round 1."""
    p, _ = planner(kb, "self-refine", [GOOD, "correct"])
    result = p.plan(GOAL)
    assert result.trace.lines()[0] == "self-refine: a complete plan (1 of 3 refinement round(s) run); stopped: finished"
    assert result.trace.to_dict()["spent"] == "1 of 3 refinement round(s) run"
    p, _ = planner(kb, "self-refine", [NO_TABLE, WHY, NO_TABLE, WHY, GOOD], refine_rounds=2)
    assert "(2 of 2 refinement round(s) run); stopped: rounds used" in p.plan(GOAL).trace.lines()[0]
    p, _ = planner(kb, "reverse-chain", ["\n".join(reversed(STEPS)) + "\ndone"])
    assert p.plan(GOAL).trace.lines()[0] == "reverse-chain: a complete plan (one reply); stopped: finished"


def test_self_refine_with_no_rounds_plans_once(kb):
    p, backend = planner(kb, "self-refine", [NO_TABLE], refine_rounds=0)
    result = p.plan(GOAL)
    assert len(backend.calls) == 1 and not result.validation.valid


def test_self_refine_keeps_its_plan_when_the_backend_goes_down(kb):
    p, backend = planner(kb, "self-refine", [GOOD, BackendTimeoutError("t"), BackendTimeoutError("t")])
    result = p.plan(GOAL)
    assert len(backend.calls) == 3 and texts(result) == STEPS
    assert result.trace.stopped is StopReason.BACKEND_DOWN and not result.trace.complete
    assert result.stats.llm.backend_errors == 2


def test_a_plan_stops_at_its_deadline_and_says_so(kb):
    """No call starts once the plan's time is up (a model that answers each call in 50 s, a deadline of 120 s):
    self-refine keeps the plan it has and its trace says the deadline ended it, not the method."""
    p, backend = planner(kb, "self-refine", [NO_TABLE, WHY, GOOD, "correct"], deadline=120)
    now = [0.0]
    answer = backend.complete

    def slow(*args, **kwargs):
        now[0] += 50.0
        return answer(*args, **kwargs)

    backend.complete, p.clock = slow, lambda: now[0]
    result = p.plan(GOAL)
    assert len(backend.calls) == 3 and texts(result) == STEPS  # plan, feedback, refined plan; no second check
    assert result.trace.stopped is StopReason.DEADLINE and not result.trace.complete
    assert "deadline of 120 s" in result.trace.problem and result.stats.section(BaselineSummary).stopped == "deadline"


def test_the_baselines_take_the_deadline_option_and_default_to_two_minutes(kb):
    for name in ("reverse-chain", "self-refine", "tot", "plan-and-solve"):
        assert planner(kb, name, [])[0].deadline == 120.0
        assert planner(kb, name, [], deadline=7)[0].deadline == 7


# ---- tot ------------------------------------------------------------------------------------------------------


def test_tot_proposes_rates_keeps_the_best_and_stops_when_the_best_is_done(kb):
    goal = Goal(item="planks", count=4)
    replies = [
        "mine 1 logs\ncraft 4 planks",  # depth 1: two proposals from the empty plan
        "sure",
        "impossible",
        "mine 1 logs\ncraft 4 planks\ndone",  # depth 2: the plan so far (forced), then two proposals
        "sure",
        "likely",
        "mine 1 logs\ncraft 4 planks\ndone",  # depth 3: done is the one new proposal
        "sure",
    ]
    p, backend = planner(kb, "tot", replies, tot_breadth=2, tot_beam=1)
    result = p.plan(goal)
    assert backend.remaining == 0
    kinds = ["propose" if "Propose:" in c.last_user_message else "value" for c in backend.calls]
    assert kinds == ["propose", "value", "value"] * 2 + ["propose", "value"]
    assert 'root ::= "mine 1 logs\\n" ' in backend.calls[3].grammar  # the plan so far, word for word
    assert backend.calls[6].grammar == propose_grammar(p, result.plan.steps, 2)
    assert "The plan, finished:" in backend.calls[7].last_user_message
    assert texts(result) == ["mine 1 logs", "craft 4 planks"] and result.validation.valid
    assert result.trace.stopped is StopReason.FINISHED and result.trace.rounds == 3


def test_tot_reaching_its_depth_returns_the_best_partial_plan_and_says_so(kb):
    replies = ["craft 2 stick", "likely", "craft 2 stick\ncraft 4 stick", "likely"]
    p, backend = planner(kb, "tot", [*replies, "craft 2 stick\ncraft 4 stick\ncraft 6 stick", "likely"], tot_breadth=1)
    p.depth = 3  # the search's depth, small so the test's script stays short
    result = p.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 6
    assert result.trace.stopped is StopReason.DEPTH_USED and not result.trace.complete
    assert texts(result) == ["craft 2 stick", "craft 4 stick", "craft 6 stick"]
    assert result.stats.llm.unanswered == 1 and "no complete plan" in result.trace.lines()[0]


def test_tot_breadth_and_beam_are_checked(kb):
    with pytest.raises(ValueError, match="--tot-breadth must be from 1 to 8"):
        planner(kb, "tot", [], tot_breadth=0)
    with pytest.raises(ValueError, match="--tot-beam must be from 1 to 8"):
        planner(kb, "tot", [], tot_beam=9)


# ---- plan-and-solve ---------------------------------------------------------------------------------------------


def test_plan_and_solve_asks_for_the_subtasks_then_for_the_steps(kb):
    subtasks = "get 2 stick\nget 1 crafting_table\nget 1 wooden_pickaxe\ndone"
    p, backend = planner(kb, "plan-and-solve", [subtasks, GOOD])
    result = p.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 2
    first, second = backend.calls
    assert first.last_user_message.endswith(prompts.ASK_SUBTASKS) and first.grammar == p.subtask_grammar
    assert second.last_user_message == prompts.ASK_SOLVE and second.grammar == p.plan_grammar
    assert subtasks in [m["content"] for m in second.messages]
    assert texts(result) == STEPS and result.trace.stopped is StopReason.FINISHED


@pytest.mark.parametrize("name", ["self-refine", "plan-and-solve"])
def test_the_forward_baselines_plans_end_at_the_goals_step(kb, name):
    past = GOOD.replace("\ndone", "\ncraft 1 furnace\ncraft 1 chest\ndone")
    replies = {"self-refine": [past, "correct"], "plan-and-solve": ["get 1 wooden_pickaxe\ndone", past]}[name]
    p, backend = planner(kb, name, replies, **({"rounds": 1} if name == "self-refine" else {}))
    result = p.plan(GOAL)
    assert backend.remaining == 0 and texts(result) == STEPS and result.validation.valid
    assert result.trace.to_dict()["past_goal"] == 2
    assert any("2 line(s) after the goal's step not read" in line for line in result.trace.lines())


# ---- all four -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_every_grammar_is_one_the_model_and_the_stand_ins_can_use(kb, name):
    p, _ = planner(kb, name, [])
    partial = make_planner("symbolic", kb).plan(GOAL).plan.steps[:3]
    grammars = [p.plan_grammar, prompts.FEEDBACK_GRAMMAR, prompts.VALUE_GRAMMAR, subtask_grammar(p)]
    grammars += [propose_grammar(p, (), 3), propose_grammar(p, partial, 1)]
    for grammar in grammars:
        assert lint_gbnf(grammar) == []
        compile_grammar(grammar)


@pytest.mark.parametrize("name", ["self-refine", "tot", "plan-and-solve"])
def test_copy_facts_answers_each_forward_baseline_with_the_facts_plan(kb, name):
    from barsym.llm.stand_in import make_stand_in

    result = with_facts(kb, name, backend=make_stand_in("copy-facts")).plan(GOAL)
    symbolic = make_planner("symbolic", kb).plan(GOAL)
    assert texts(result) == [str(s) for s in symbolic.plan.steps] and result.validation.valid
    assert result.trace.complete


def test_copy_facts_writes_the_chain_back_from_the_goal_as_the_example_does(kb):
    """The stand-in copies the facts in the order the prompt's worked example used them: Reverse Chain's example
    writes the goal's step first, so its chain, read back by the planner, is the facts' plan."""
    from barsym.llm.stand_in import make_stand_in

    result = with_facts(kb, "reverse-chain", backend=make_stand_in("copy-facts")).plan(GOAL)
    symbolic = make_planner("symbolic", kb).plan(GOAL)
    assert texts(result) == [str(s) for s in symbolic.plan.steps] and result.validation.valid


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_no_facts_leaves_them_out_of_the_prefix_and_the_task(kb, name):
    facts = with_facts(kb, name, backend=ScriptedLLM([], LLMOptions(n_ctx=8192)))
    assert any("Known, in the order" in m["content"] for m in facts.prefix)
    short = lambda call: "correct" if call.grammar == prompts.FEEDBACK_GRAMMAR else "done"  # noqa: E731
    p, backend = planner(kb, name, [short] * 20, facts=False)
    p.plan(GOAL)
    assert p.facts is None and all("Known" not in m["content"] for m in p.prefix)
    assert backend.calls and all("Known" not in c.last_user_message for c in backend.calls)


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_the_stats_section_reads_back_from_json(kb, name):
    result = make_planner(name, kb, llm_stand_in="first", log=False).plan(Goal(item="stick", count=4))
    data = result.stats.to_dict()
    assert data["baseline"]["method"] == name
    assert PlanStats.from_dict(data).section(BaselineSummary) == result.stats.section(BaselineSummary)


@pytest.mark.parametrize("name", ["self-refine", "plan-and-solve"])
def test_every_real_call_is_in_the_call_log_in_the_order_asked(kb, tmp_path, name):
    from barsym.reasoning.calls.call_log import CallLog

    replies = [NO_TABLE, WHY, GOOD, "correct"] if name == "self-refine" else ["get 1 wooden_pickaxe\ndone", GOOD]
    log = CallLog(tmp_path / "calls.db")
    p = make_planner(name, kb, backend=ScriptedLLM(replies, LLMOptions(n_ctx=8192)), log=log)
    result = p.plan(GOAL)
    records = log.recent(None)
    assert len(records) == result.stats.llm.llm_calls == len(replies)
    assert [r.reply for r in records] == replies and [r.attempt for r in records] == list(range(1, len(replies) + 1))
    assert {r.goal for r in records} == {"1 wooden_pickaxe"} and all(r.verdict == "accepted" for r in records)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--planner", "tot", "--refine-rounds", "2"], "--refine-rounds applies to --planner self-refine only"),
        (["--planner", "cot", "--tot-beam", "2"], "--tot-beam applies to --planner tot only"),
        (["--planner", "self-refine", "--refine-rounds", "11"], "--refine-rounds must be"),
        (["--planner", "tot", "--tot-breadth", "0"], "--tot-breadth must be"),
        (["--planner", "plan-and-solve", "--llm-mode", "vocab"], "grammar is always the game's vocabulary"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "eval"])
def test_bad_options_are_one_line_exit_2(capsys, argv, words, command):
    from cli_run import one_line, run

    head = ["plan", "stick"] if command == "plan" else ["eval", "--dataset", "bar", "--limit", "1"]
    code, out, err = run(capsys, *head, *argv)
    assert code == 2 and out == "" and one_line(err) and words in err, err


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_eval_with_a_stand_in_writes_json_results_like_every_planner(capsys, tmp_path, name):
    import json

    from cli_run import run

    out = tmp_path / "r.json"
    code, _, err = run(
        capsys,
        "eval",
        "--dataset",
        "bar",
        "--planner",
        name,
        "--llm-stand-in",
        "copy-facts",
        "--limit",
        "2",
        "--quiet",
        "-o",
        out,
    )
    data = json.loads(out.read_text())
    assert code in (0, 1) and "Traceback" not in err
    assert data["planner"] == f"{name}[copy-facts]" and data["overall"]["tasks"] == 2
    assert all(t["stats"]["baseline"]["method"] == name for t in data["tasks"].values())


def test_a_stand_in_is_held_to_the_context_the_model_would_be_loaded_with(kb):
    from barsym.reasoning.planners.forward.self_refine import context_for
    from barsym.reasoning.planners.forward.tree_of_thoughts import TOT_CONTEXT

    assert make_planner("tot", kb, llm_stand_in="copy-facts", log=False).n_ctx == TOT_CONTEXT
    refine = make_planner("self-refine", kb, llm_stand_in="copy-facts", log=False, refine_rounds=5)
    assert refine.n_ctx == context_for(5, False) > context_for(0, False)  # no facts (issue 54)
    scripted, _ = planner(kb, "tot", [])  # a backend given by the caller keeps its own context
    assert scripted.n_ctx == 8192


def _server_reply(messages) -> str:
    """A stub server that ignores grammars: a rating, a verdict, sub-tasks or a short plan, by what is asked."""
    asked = messages[-1]["content"]
    if "Evaluate:" in asked:
        return "sure"
    if asked == prompts.ASK_FEEDBACK:
        return "correct"
    if asked.endswith(prompts.ASK_SUBTASKS):
        return "get 4 planks\ndone"
    return "mine 1 logs\ncraft 4 planks\ndone"


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_eval_through_an_openai_compatible_server(capsys, tmp_path, name):
    import json

    from cli_run import run
    from loopback import chat_stubs

    with chat_stubs() as start:
        server = start(_server_reply)
        out = tmp_path / "r.json"
        code, _, err = run(
            capsys, "eval", "--dataset", "bar", "--planner", name, "--llm-url", server.url, "--limit", "1", "-o", out
        )
    assert code in (0, 1) and "Traceback" not in err and server.posts >= 1
    (task,) = json.loads(out.read_text())["tasks"].values()
    assert task["stats"]["llm_calls"] == server.posts and task["stats"]["baseline"]["method"] == name


@pytest.mark.parametrize("name", ["reverse-chain", "plan-and-solve"])
def test_a_server_that_never_answers_costs_two_timeouts_and_one_line(capsys, name):
    from cli_run import one_line, run
    from loopback import chat_stubs

    with chat_stubs() as start:
        server = start("mine 1 logs\ndone", hang=True)
        code, out, err = run(
            capsys, "plan", "stick", "--planner", name, "--llm-url", server.url, "--llm-timeout", "0.5"
        )
    said = "".join(line for line in err.splitlines(keepends=True) if "warning: through the server" not in line)
    assert code == 1 and out == "" and one_line(said) and "LLM backend failed" in said, err  # past the server's line
    assert server.posts == 2


@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "plan-and-solve"])
def test_the_deadline_option_reaches_the_baselines_from_the_command_line(capsys, name):
    code, out, err = run(capsys, "plan", "stick", "--planner", name, "--llm-stand-in", "copy-facts", "--deadline", "30")
    assert code in (0, 1) and "Traceback" not in err, err  # no facts to copy: the plan may not run
    assert f"planner {name}[copy-facts]" in out
