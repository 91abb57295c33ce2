"""The stand-ins: choosers that answer under a planner's grammar with no model (barsym.llm.stand_in)."""

from __future__ import annotations

import json

import pytest

from barsym.llm import LLMError
from barsym.llm.grammar_match import compile_grammar
from barsym.llm.stand_in import STAND_INS, continuations, facts_candidates, make_stand_in
from barsym.model import Goal
from barsym.planner import make_planner
from barsym.planner.registry import planner_label
from cli_run import one_line, run

PICKAXE = (
    'root ::= ("craft 1 stone_pickaxe: " ("1" | "2" | "3") " " ("cobblestone") ", " ("1" | "2") " " '
    '("stick") ", 1 crafting_table")'
)
PICKAXE_FACTS = (
    "Goal: 1 stone_pickaxe\nKnown: craft 1 stone_pickaxe (1 craft of 1) needs 3 cobblestone, 2 stick, 1 crafting_table."
)
STICK = (
    'root ::= ("craft 2 stick: " ("1" | "2") " " ("planks") | "craft 2 stick: " ("1" | "2" | "3" | "4") " " ("bamboo"))'
)
STICK_FACTS = (
    "Goal: 2 stick\nKnown: craft 2 stick (1 craft of 4) needs 2 planks; or craft 2 stick "
    "(2 crafts of 1, each 2 bamboo) needs 4 bamboo."
)


def ask(name: str, grammar: str, prompt: str, seed: int = 0) -> str:
    return make_stand_in(name).complete([{"role": "user", "content": prompt}], grammar=grammar, seed=seed).text


def test_options_are_words_with_their_boundary_and_the_end_last():
    state = compile_grammar('root ::= "mine " ("3" | "12") " " ("logs" | "log") (", more")?').start()
    assert continuations(state.advance("mine ")) == ["12 ", "3 "]
    after = state.advance("mine 3 ")
    assert continuations(after) == ["log", "log,", "logs", "logs,"]
    assert continuations(after.advance("logs")) == [",", None]  # None: the reply may end here


def test_each_chooser_on_the_same_grammar():
    assert ask("first", PICKAXE, PICKAXE_FACTS) == "craft 1 stone_pickaxe: 1 cobblestone, 1 stick, 1 crafting_table"
    assert (
        ask("largest", PICKAXE, "no facts at all") == "craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table"
    )
    assert (
        ask("copy-facts", PICKAXE, PICKAXE_FACTS) == "craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table"
    )


def test_copy_facts_follows_the_first_way_and_largest_the_largest_count():
    assert ask("copy-facts", STICK, STICK_FACTS) == "craft 2 stick: 2 planks"
    assert ask("largest", STICK, STICK_FACTS) == "craft 2 stick: 4 bamboo"


def test_copy_facts_without_facts_is_first():
    assert ask("copy-facts", STICK, "Goal: 2 stick") == ask("first", STICK, "Goal: 2 stick")


def test_random_is_admitted_seeded_and_varies():
    grammar = compile_grammar(PICKAXE)
    replies = {ask("random", PICKAXE, f"prompt {i}") for i in range(30)}
    assert all(grammar.start().advance(r) is not None and grammar.start().advance(r).accepting for r in replies)
    assert len(replies) > 1
    assert ask("random", PICKAXE, "prompt 1", seed=4) == ask("random", PICKAXE, "prompt 1", seed=4)


def test_facts_lines_become_candidate_replies():
    assert facts_candidates(STICK_FACTS) == ["craft 2 stick: 2 planks", "craft 2 stick: 4 bamboo"]
    line = "Known: mine 3 logs needs nothing; or smelt 1 torch (x) needs 1 coal or charcoal, 1 furnace."
    assert facts_candidates(line) == ["mine 3 logs", "smelt 1 torch: 1 coal, 1 furnace"]


def test_the_commands_offer_the_stand_ins_there_are():
    from barsym.llm.settings import ModelSettings

    offered = ModelSettings.model_json_schema()["properties"]["llm_stand_in"]["anyOf"][0]["enum"]
    assert tuple(offered) == STAND_INS
    assert all(make_stand_in(name).name == name for name in STAND_INS)


def test_a_call_without_a_grammar_is_an_llm_error():
    with pytest.raises(LLMError, match="needs a grammar"):
        make_stand_in("first").complete([{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="unknown stand-in"):
        make_stand_in("smartest")


def test_a_reply_that_would_not_end_stops_at_the_length_limit():
    reply = make_stand_in("first").complete(
        [{"role": "user", "content": "x"}], grammar='root ::= "a" root | "b"', max_tokens=2
    )
    assert reply.finish_reason == "length" and reply.text == "a" * 12


@pytest.mark.parametrize("name", ["bar", "llm-only", "deps", "cot"])
def test_every_llm_planner_runs_with_a_stand_in_and_says_so(kb, name):
    planner = make_planner(
        name, kb, llm_stand_in="copy-facts", log=False, **({"deps_rounds": 1} if name == "deps" else {})
    )
    result = planner.plan(Goal(item="crafting_table", count=1))
    assert planner.name.endswith("[copy-facts]") and result.planner == planner.name
    assert result.stats.model.llm_calls >= 1


def test_bar_with_copy_facts_is_accepted_first_try(kb):
    planner = make_planner("bar", kb, llm_stand_in="copy-facts", facts=True, log=False)
    result = planner.plan(Goal(item="stone_pickaxe", count=1))
    llm = result.stats.model
    assert result.validation.valid and llm.fallbacks == 0 and llm.accepted_first_try >= 4
    assert result.stats.plan_fallback is None


def test_a_stand_in_for_a_planner_without_a_model_is_refused(kb):
    with pytest.raises(ValueError, match="LLM planners"):
        make_planner("symbolic", kb, llm_stand_in="first")
    assert planner_label("bar", {"llm_stand_in": "first"}) == "bar[first]" and planner_label("bar", {}) == "bar"


def test_plan_command_names_the_stand_in(capsys):
    code, out, err = run(capsys, "plan", "stone_pickaxe", "--llm-stand-in", "largest")
    assert code == 0 and "planner bar[largest]" in out


@pytest.mark.parametrize("argv", [["--llm-stand-in", "smartest"], ["--llm-stand-in", "first", "--model", "x.gguf"]])
def test_bad_stand_in_options_are_one_line(capsys, argv):
    code, out, err = run(capsys, "plan", "stone_pickaxe", *argv)
    assert code == 2 and one_line(err)


def test_eval_run_file_and_report_record_the_stand_in(capsys, tmp_path):
    run_file, report = tmp_path / "run.jsonl", tmp_path / "report.html"
    code, out, err = run(
        capsys, "eval", "--dataset", "bar", "--limit", "2", "--llm-stand-in", "copy-facts", "--run", run_file
    )
    assert code == 0, err
    assert "planner bar[copy-facts]" in out
    header = json.loads(run_file.read_text().splitlines()[0])
    assert header["spec"]["options"]["llm_stand_in"] == "copy-facts"
    code, out, err = run(capsys, "report", run_file, "-o", report)
    assert code == 0 and "bar[copy-facts]" in report.read_text()


def test_copy_facts_writes_a_forward_plan_from_the_ordered_facts():
    prompt = (
        "Goal: 1 crafting_table\nKnown, in the order a plan can use it:\n- mine 1 logs needs nothing\n"
        "- craft 4 planks (1 craft of 4, each 1 logs) needs 1 logs\n"
        "- craft 1 crafting_table (1 craft of 1) needs 4 planks"
    )
    grammar = (
        'root ::= (step "\\n")+ "done"\nstep ::= verb " " count " " item\nverb ::= "mine" | "craft"\n'
        'count ::= [1-9] [0-9]?\nitem ::= "logs" | "planks" | "crafting_table" | "stick"'
    )
    assert ask("copy-facts", grammar, prompt) == "mine 1 logs\ncraft 4 planks\ncraft 1 crafting_table\ndone"


def test_copy_facts_writes_a_backward_chain_where_the_example_does():
    """Reverse Chain's worked example answers last step first, so the stand-in copies the facts that way too
    (copied forward, the planner's reading back made BAR's table show reverse-chain[copy-facts] at Acc 3)."""
    grammar = (
        'root ::= (step "\\n")+ "done"\nstep ::= verb " " count " " item\nverb ::= "mine" | "craft"\n'
        'count ::= [1-9] [0-9]?\nitem ::= "logs" | "planks" | "crafting_table" | "stick"'
    )
    facts = "Known, in the order a plan can use it:\n- mine 1 logs needs nothing\n- craft 4 planks needs 1 logs\n"
    example = [{"role": "user", "content": "Goal: 4 planks\n" + facts}]
    task = {"role": "user", "content": "Goal: 1 stick\n" + facts + "- craft 4 stick needs 2 planks"}
    backward = [*example, {"role": "assistant", "content": "craft 4 planks\nmine 1 logs\ndone"}, task]
    forward = [*example, {"role": "assistant", "content": "mine 1 logs\ncraft 4 planks\ndone"}, task]
    stand_in = make_stand_in("copy-facts")
    assert stand_in.complete(backward, grammar=grammar).text == "craft 4 stick\ncraft 4 planks\nmine 1 logs\ndone"
    assert stand_in.complete(forward, grammar=grammar).text == "mine 1 logs\ncraft 4 planks\ncraft 4 stick\ndone"


@pytest.mark.parametrize("item", ["golden_pickaxe", "diamond_pickaxe"])
def test_deps_with_copy_facts_plans_the_long_tasks_too(kb, item):
    """A stand-in has no context window: DEPS' long dialogues are not cut as "context full" on its account
    (BAR's table had deps[copy-facts] at 0 on gold, diamond and redstone), and its explanations are quick.
    DEPS takes no facts any more (issue 52), so the stand-in has no recipe to copy and its plan fails; what
    is left to show is that the loop stops for its own reasons, never for the context."""
    result = make_planner("deps", kb, llm_stand_in="copy-facts", log=False, feedback_world="deterministic").plan(
        Goal(item=item)
    )
    assert result.trace.rounds and result.trace.stopped.value != "context_full"
    assert make_stand_in("copy-facts").options.n_ctx > 100_000
