"""``barsym parse``: a prose plan -> BAR steps (barsym.reasoning.prose.parser), with the scripted fake LLM and stand-ins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barsym.llm import ScriptedLLM
from barsym.llm.grammar_match import compile_grammar
from barsym.llm.stand_in import make_stand_in
from barsym.planner.registry import graph_for
from barsym.reasoning.prose.parser import ProseParser, count_of, split_clauses
from cli_run import one_line, run

PARAPHRASES = Path(__file__).parent / "data" / "paraphrases.json"
PROSE = (
    "Chop four logs, make planks, then a crafting table. Craft 4 sticks and a wooden pickaxe; dig down, "
    "then mine three cobbelstone and craft a stone pickaxe."
)
EXPECTED = [
    "mine 4 logs",
    "craft 9 planks",
    "craft 1 crafting_table",
    "craft 4 stick",
    "craft 1 wooden_pickaxe",
    "dig down with wooden_pickaxe",
    "mine 3 cobblestone with wooden_pickaxe",
    "craft 1 stone_pickaxe",
]


@pytest.fixture(scope="module")
def graph(kb):
    return graph_for(kb)


def test_clauses_and_counts_in_words():
    assert split_clauses("First chop four logs, then make planks.\nNext, a crafting table") == [
        "chop four logs",
        "make planks",
        "a crafting table",
    ]
    assert count_of("get twenty one cobblestone".split()) == (21, ["get", "cobblestone"])
    assert count_of("make a dozen planks".split()) == (12, ["make", "planks"])
    assert count_of("craft a furnace".split()) == (1, ["craft", "furnace"])
    assert count_of("make planks".split()) == (None, ["make", "planks"])


def test_names_near_the_words_typos_and_plurals(kb, graph):
    parser = ProseParser(kb, graph, ScriptedLLM())
    assert parser.clause("mine three cobbelstone").candidates[0] == "cobblestone"
    assert parser.clause("craft 2 crafting tables").candidates[0] == "crafting_table"
    assert parser.clause("build a wooden pikcaxe").candidates[0] == "wooden_pickaxe"
    assert parser.clause("make a wood shov").candidates[0] == "wooden_shovel"  # clipped words: a part's start
    assert parser.clause("craft the golden shov").candidates[0] == "golden_shovel"
    assert "stone" not in parser.clause("make a stone shov").candidates[:1]
    clause = parser.clause("get 3 iron ore with the stone pickaxe")
    assert clause.count == 3 and clause.candidates[0] == "iron_ore" and clause.tools[0] == "stone_pickaxe"


def test_a_name_the_text_spells_out_is_the_only_one_offered(kb, graph):
    """Every part of one name a word of the clause, the verb agreeing: nothing is left for a model to choose
    (a taught adapter read "craft 1 iron pickaxe" as `mine 1 iron_ore`, the second name offered)."""
    parser = ProseParser(kb, graph, ScriptedLLM())
    assert parser.clause("craft 1 iron pickaxe").candidates == ("iron_pickaxe",)
    assert parser.clause("mine 2 stone blocks with my wooden pickaxe").candidates == ("cobblestone",)  # its drop
    assert parser.clause("collect 1 diamond").candidates == ("diamond",)
    fired = parser.clause("fire three iron bars").candidates  # the verb disagrees: "iron bars" said for ingots
    assert fired[0] == "iron_ingot" and len(fired) > 1
    assert len(parser.clause("create one stone furnace").candidates) > 1  # two names spelled out: still a choice
    assert len(parser.clause("mine three cobbelstone").candidates) > 1  # a typo: the closest names


def test_each_clause_is_asked_under_its_grammar_and_counts_and_tools_are_filled(kb, graph):
    replies = [
        "mine 4 logs",
        "craft 1 planks",
        "craft 1 crafting_table",
        "craft 4 stick",
        "craft 1 wooden_pickaxe",
        "dig down",
        "mine 3 cobblestone",
        "craft 1 stone_pickaxe",
    ]
    llm = ScriptedLLM(replies)
    parsed = ProseParser(kb, graph, llm).parse(PROSE)
    assert [str(s) for s in parsed.steps] == EXPECTED
    assert llm.remaining == 0 and parsed.calls == 8
    first = llm.calls[0]
    assert first.last_user_message.startswith("Sentence: chop 4 logs\nKnown: mine 4 logs")
    state = compile_grammar(first.grammar).start()
    assert state.advance("mine 4 logs").accepting
    assert state.advance("craft 4 logs") is None and state.advance("mine 5 logs") is None  # verb and count fixed
    for call, reply in zip(llm.calls, replies):  # every scripted reply is one its grammar admits
        after = compile_grammar(call.grammar).start().advance(reply)
        assert after is not None and after.accepting


def test_copy_facts_parses_the_example_and_first_does_not(kb, graph):
    assert [str(s) for s in ProseParser(kb, graph, make_stand_in("copy-facts")).parse(PROSE).steps] == EXPECTED
    assert [str(s) for s in ProseParser(kb, graph, make_stand_in("first")).parse(PROSE).steps] != EXPECTED


def test_a_clause_naming_nothing_is_skipped(kb, graph):
    parsed = ProseParser(kb, graph, make_stand_in("copy-facts")).parse("hello there, mine 3 logs")
    assert [str(s) for s in parsed.steps] == ["mine 3 logs"] and parsed.skipped == ["hello there"]


def test_a_clause_with_no_name_near_it_is_named_never_guessed_and_the_plan_is_incomplete(kb, graph):
    """A smeltery is near no name: the model is not asked (it would pick an unrelated item), the clause is named
    in the text and the record, and the plan is marked incomplete; the steps around it are read."""
    from barsym.reasoning.prose.prose_io import parsed_record, parsed_text
    from barsym.validation import Validator

    llm = ScriptedLLM(["mine 3 logs", "craft 4 stick"])
    parser = ProseParser(kb, graph, llm)
    parsed = parser.parse("chop 3 logs, build a smeltery, then make 4 sticks")
    assert [str(s) for s in parsed.steps] == ["mine 3 logs", "craft 4 stick"]
    assert parsed.unread == ["build a smeltery"] and parsed.skipped == [] and len(llm.calls) == 2
    assert not parsed.complete
    result = Validator(kb).validate(parsed.plan())
    text = parsed_text(parsed, "p.txt", "test", result)
    assert "could not read: 'build a smeltery'" in text and "incomplete: 1 clause(s)" in text
    record = parsed_record(parsed, "p.txt", "test", result)
    assert record["unread"] == ["build a smeltery"] and record["complete"] is False


@pytest.mark.parametrize("verb", ["place", "build", "make", "craft", "put down"])
def test_a_workbench_placed_built_or_made_is_a_crafting_table(kb, graph, verb):
    """Players' names come from the alias table (aliases.json's players, each with its source): 'workbench' is
    the crafting table's old name, read before any name is matched, so the only name offered is the table."""
    llm = ScriptedLLM(["craft 1 crafting_table"])
    parsed = ProseParser(kb, graph, llm).parse(f"{verb} a workbench")
    assert [str(s) for s in parsed.steps] == ["craft 1 crafting_table"] and parsed.complete
    offered = compile_grammar(llm.calls[0].grammar).start()
    assert offered.advance("craft 1 crafting_table") is not None and offered.advance("craft 1 lime_carpet") is None


@pytest.mark.parametrize(
    ("sentence", "step"),
    [
        ("smelt three iron", "smelt 3 iron_ingot"),  # iron_nugget, the closest and cheapest, is crafted
        ("cook 2 iron", "smelt 2 iron_ingot"),
        ("harvest 3 iron with a stone pickaxe", "mine 3 iron_ore with stone_pickaxe"),
        ("mine 2 stone blocks with my wooden pickaxe", "mine 2 cobblestone with wooden_pickaxe"),  # stone drops it
        ("break a diamond ore with the iron pickaxe", "mine 1 diamond with iron_pickaxe"),
        ("make 2 stone", "smelt 2 stone"),  # no verb word: the name's usual way
        ("craft 4 iron bars", "craft 4 iron_bars"),
        ("make 2 cut sandstone", "craft 2 cut_sandstone"),  # the verb is the clause's first word, not "cut"
        ("ok so first collect 3 wood", "mine 3 logs"),
    ],
)
def test_the_sentence_s_verb_chooses_among_close_names(kb, graph, sentence, step):
    """The verb says the kind of step ("cook" is a smelt): the closest name made that way comes first, and a
    mined block gives what breaking it drops (the rule book's sources); copy-facts copies the first option."""
    parsed = ProseParser(kb, graph, make_stand_in("copy-facts")).parse(sentence)
    assert [str(s) for s in parsed.steps] == [step]


def test_players_wood_is_logs_but_oak_wood_is_the_block(kb, graph):
    parser = ProseParser(kb, graph, ScriptedLLM())
    assert parser.clause("chop 4 wood").candidates == ("logs",)
    assert parser.clause("collect 3 wood").candidates == ("logs",)
    assert parser.clause("craft 3 oak wood").candidates[0] == "oak_wood"
    assert parser.clause("mine 3 raw iron").candidates == ("iron_ore",)


def test_a_text_naming_nothing_known_is_not_guessed_into_steps(kb, graph):
    llm = ScriptedLLM([])
    parsed = ProseParser(kb, graph, llm).parse("hello world, how are you")
    assert parsed.steps == [] and llm.calls == []
    assert sorted(parsed.skipped + parsed.unread) == ["hello world", "how are you"]


def test_the_paraphrase_set_is_the_expert_plans(kb):
    data = json.loads(PARAPHRASES.read_text())
    plans = data["plans"]
    assert 40 <= len(plans) <= 60
    assert all(p["text"] and p["expected"] and all(i < len(p["expected"]) for i in p["open_counts"]) for p in plans)


def test_parse_command_text_and_json(capsys, tmp_path):
    path = tmp_path / "plan.txt"
    path.write_text(PROSE)
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "copy-facts")
    assert code == 0 and "verdict: valid" in out and "mine 3 cobblestone with wooden_pickaxe" in out
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "copy-facts", "--format", "json")
    data = json.loads(out)
    assert code == 0 and [s["step"] for s in data["steps"]] == EXPECTED
    assert data["parsed_by"] == "stand-in copy-facts" and data["validation"]["valid"]
    code, out, err = run(capsys, "validate", "--text", path, "--llm-stand-in", "first")
    assert code == 1 and "verdict: invalid" in out


def test_parse_writes_bar_records_that_validate_reads(capsys, tmp_path):
    """``--format bar``: BAR JSON Lines as ``plan --format bar`` writes them, what annotators correct (issue 35)."""
    from barsym.bar_io import parse_plan

    path = tmp_path / "plan.txt"
    path.write_text(PROSE)
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "copy-facts", "--format", "bar")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and err == "" and set(records[0]) == {"type", "obj_name", "obj_num", "tool"}
    assert [str(s) for s in parse_plan(out).steps] == EXPECTED
    saved = tmp_path / "plan.jsonl"
    saved.write_text(out)
    assert run(capsys, "validate", saved)[0] == 0
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "first", "--format", "bar")
    assert code == 1 and out and one_line(err) and "the parsed plan cannot run: fails at step" in err


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"mine\x00logs", "binary"),
        (b"\xff\xfe\xfa", "not UTF-8"),
        (b"hello world, how are you", "no step found"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "plan.txt"
    path.write_bytes(content)
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "first")
    assert code == 2 and one_line(err) and message in err and out == ""


@pytest.mark.parametrize(
    "argv", [["no-such-file.txt"], ["{plan}", "--format", "yaml"], ["{plan}", "--llm-stand-in", "smartest"]]
)
def test_bad_options_are_one_line_exit_2(capsys, tmp_path, argv):
    plan = tmp_path / "plan.txt"
    plan.write_text("mine 3 logs")
    try:
        code, _out, err = run(capsys, "parse", *[a.replace("{plan}", str(plan)) for a in argv])
    except SystemExit as exited:  # argparse refuses a choice outside --format's with its own one line
        code, (_out, err) = exited.code, capsys.readouterr()
        err = err.splitlines()[-1] + "\n"
    assert code == 2 and one_line(err)


def test_validate_text_plays_by_the_rules_it_is_given(capsys, tmp_path):
    path = tmp_path / "plan.txt"
    path.write_text("Chop four logs, make planks, then a crafting table.")
    code, out, err = run(capsys, "validate", "--text", path, "--llm-stand-in", "copy-facts")
    assert code == 0 and "verdict: valid" in out
    code, out, err = run(capsys, "validate", "--text", path, "--llm-stand-in", "copy-facts", "--rules", "crafting")
    assert code == 1 and "under the crafting rules nothing can be mined" in out


def test_validate_text_and_files_together_validates_both(capsys, tmp_path):
    """``validate --text FILE`` beside plan files was refused ("not both"): now the files, then the prose plan,
    one summary; a prose file that cannot be read is one line and counted unusable, the files still validated."""
    from testdata import REPO

    path = tmp_path / "plan.txt"
    path.write_text(PROSE)
    plan = REPO / "examples" / "diamond_pickaxe.jsonl"
    argv = ["validate", plan, "--text", path, "--llm-stand-in", "copy-facts", "--quiet"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == "summary: 2 plan(s): 1 valid, 1 valid with waste, 0 invalid"
    assert "model: stand-in copy-facts (no model)" in out and f"{path}: 8 steps from 8 clauses" in out
    code, out, err = run(capsys, *argv, "--format", "json")
    records = json.loads(out)
    assert code == 0 and [r["file"] for r in records] == [str(plan), str(path)]
    assert records[1]["verdict"] == "valid with waste" and [s["step"] for s in records[1]["steps"]] == EXPECTED
    assert records[1]["parsed_by"] == "stand-in copy-facts" and records[1]["model"]["stand_in"] == "copy-facts"
    code, out, err = run(capsys, "validate", plan, "--text", tmp_path / "none.txt", "--llm-stand-in", "first")
    assert code == 2 and one_line(err) and "none.txt" in err
    assert out.splitlines()[-1] == "summary: 2 plan(s): 1 valid, 0 valid with waste, 0 invalid, 1 unusable"


def test_parse_names_what_ran_and_how_long_it_took(capsys, tmp_path):
    path = tmp_path / "plan.txt"
    path.write_text(PROSE)
    code, out, err = run(capsys, "validate", "--text", path, "--llm-stand-in", "copy-facts", "--start", "logs=2")
    footer = out.splitlines()[-2:]
    assert code == 0 and footer[0].startswith("ran: parse (") and " s), rules survival, start layer 0" in footer[0]
    assert "inventory: 2 logs" in footer[0] and footer[1] == "model: stand-in copy-facts (no model)"
    code, out, err = run(capsys, "parse", path, "--llm-stand-in", "copy-facts", "--format", "json")
    data = json.loads(out)
    assert data["rules"] == "survival" and data["start"] == {"layer": 0, "inventory": {}}
    assert data["model"]["stand_in"] == "copy-facts" and data["seconds"] >= 0 and "planner" not in data
