"""The recall-check step score: the model's reply to the decomposer's question, compared with the state."""

from __future__ import annotations

import pytest

from barsym.consistency.config import ScoreMethod
from barsym.kb import Rules
from barsym.llm.fake import ScriptedLLM
from barsym.model import Goal, Step, StepType
from barsym.reasoning.grammars.reply_grammar import parse_reply
from barsym.reasoning.scoring.recall_check import held_share
from barsym.reasoning.scoring.step_scorer import LLMStepScorer
from barsym.sim import State

LOGS = Step(type=StepType.MINE, item="logs", count=3)
PLANKS = Step(type=StepType.CRAFT, item="planks", count=12)
TABLE = Step(type=StepType.CRAFT, item="crafting_table", count=1)
STICK = Step(type=StepType.CRAFT, item="stick", count=4)
GOAL = Goal(item="crafting_table", count=1)


def _reply(kb, text: str):
    return parse_reply(text, kb)


def test_the_score_is_the_least_held_need(kb):
    rules = Rules(kb)
    reply = _reply(kb, "craft 1 wooden_pickaxe: 3 planks, 2 stick, 1 crafting_table")
    full = State.start({"planks": 3, "stick": 2, "crafting_table": 1})
    assert held_share(rules, reply, full) == 1.0
    assert held_share(rules, reply, State.start({"planks": 3, "stick": 1, "crafting_table": 1})) == 0.5
    assert held_share(rules, reply, State.start({"planks": 3, "stick": 2})) == 0.0
    assert held_share(rules, _reply(kb, "mine 3 logs"), State.start()) == 1.0  # needs nothing


def test_families_tools_layers_and_fuel_are_read_as_a_player_would(kb):
    rules = Rules(kb)
    # a family name is served by any member
    assert held_share(rules, _reply(kb, "craft 4 planks: 1 logs"), State.start({"oak_log": 1})) == 1.0
    # a tool is served by one of a higher tier, not a lower one
    mine = _reply(kb, "mine 3 cobblestone with wooden_pickaxe: 1 wooden_pickaxe, layer 1")
    assert held_share(rules, mine, State.start({"stone_pickaxe": 1}, layer=1)) == 1.0
    iron = _reply(kb, "mine 1 iron_ore with stone_pickaxe: 1 stone_pickaxe, layer 2")
    assert held_share(rules, iron, State.start({"wooden_pickaxe": 1}, layer=2)) == 0.0
    assert held_share(rules, mine, State.start({"wooden_pickaxe": 1}, layer=0)) == 0.0  # not deep enough
    # a smelt's fuel is burn time: coal serves where the reply named planks
    smelt = _reply(kb, "smelt 4 stone: 4 cobblestone, 3 planks, 1 furnace")
    assert held_share(rules, smelt, State.start({"cobblestone": 4, "coal": 1, "furnace": 1})) == 1.0
    assert held_share(rules, smelt, State.start({"cobblestone": 4, "furnace": 1})) == 0.0
    # the ingredient is taken out as the game takes it: one log of two kinds held is smelted, the other burns
    charcoal = _reply(kb, "smelt 1 charcoal: 1 logs, 1 planks, 1 furnace")
    assert held_share(rules, charcoal, State.start({"oak_log": 1, "birch_log": 1, "furnace": 1})) == 1.0
    assert held_share(rules, charcoal, State.start({"oak_log": 1, "furnace": 1})) == 0.0


def test_the_scorer_asks_the_decomposers_question_once_per_goal_and_never_prints_a_recipe(kb):
    rules = Rules(kb)
    backend = ScriptedLLM(["mine 3 logs", "craft 12 planks: 3 logs", "craft 1 crafting_table: 4 planks"])
    scorer = LLMStepScorer(backend, method=ScoreMethod.RECALL_CHECK, rules=rules, log=False)
    good = scorer.raw([LOGS, PLANKS, TABLE], GOAL)
    assert good == [10.0, 10.0, 10.0]
    asked = [call.messages[-1]["content"] for call in backend.calls]
    assert asked == ["Goal: 3 logs", "Goal: 12 planks", "Goal: 1 crafting_table"]
    prompt = "\n".join(m["content"] for call in backend.calls for m in call.messages)
    assert "4 planks" not in prompt and "3 logs" not in prompt.replace("Goal: 3 logs", "")  # no recipe shown
    # the same goals again, in a plan that skips the planks: the replies are reused, the table is short
    bad = scorer.raw([LOGS, TABLE], GOAL)
    assert len(backend.calls) == 3
    assert bad == [10.0, 1.0]


def test_a_step_the_model_makes_another_way_scores_half_and_an_unreadable_reply_none(kb):
    rules = Rules(kb)
    have = State.start({"planks": 2})
    backend = ScriptedLLM(["craft 4 stick: 2 planks", "smelt 4 stick: 2 planks", "not a step"] + ["not a step"] * 2)
    for expected in (10.0, pytest.approx(1 + 9 * 0.5), None):
        scorer = LLMStepScorer(backend, method=ScoreMethod.RECALL_CHECK, rules=rules, log=False)
        assert scorer.recall is not None
        assert scorer.recall.score(STICK, have) == expected
    assert scorer.recall.score(Step(type=StepType.CLIMB_UP), have) == 10.0  # climbing up needs nothing


def test_recall_check_reads_a_generated_reply_so_a_server_or_stand_in_can_serve_it(kb):
    assert not ScoreMethod.RECALL_CHECK.needs_probabilities
    assert ScoreMethod.RECALL_CHECK.needs_rules
    with pytest.raises(ValueError, match="rule book"):
        LLMStepScorer(ScriptedLLM([]), method=ScoreMethod.RECALL_CHECK, log=False)
