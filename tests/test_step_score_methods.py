"""The model's step scores read from token probabilities, and the labelled step set they are judged on."""

from __future__ import annotations

import math

import pytest

from barsym.consistency import ConsistencyConfig
from barsym.consistency.anchors import SCORE_METHOD_KEY
from barsym.consistency.config import ScoreMethod
from barsym.consistency.crosscheck import auc
from barsym.consistency.step_set import dropped_steps, labelled_steps, moved_before_needs
from barsym.kb import Rules
from barsym.llm.fake import ScriptedLLM
from barsym.model import Goal, Plan, Step, StepType
from barsym.reasoning.scoring.step_scorer import (
    LLMStepScorer,
    default_method,
    expected_digit,
    needs_beside_have,
    needs_text,
    yes_share,
)
from barsym.sim import State
from barsym.validation import Validator

LOGS = Step(type=StepType.MINE, item="logs", count=4)
PLANKS = Step(type=StepType.CRAFT, item="planks", count=4)
TABLE = Step(type=StepType.CRAFT, item="crafting_table", count=1)
GOAL = Goal(item="crafting_table", count=1)


def test_auc_orders_good_above_bad_and_counts_ties_half():
    assert auc([1, 2, 3, 4], [False, False, True, True]) == 1.0
    assert auc([4, 3, 2, 1], [False, False, True, True]) == 0.0
    assert auc([5, 5, 5, 5], [False, True, False, True]) == 0.5
    assert auc([1, 3, 2, 4], [False, False, True, True]) == 0.75
    assert auc([1, 2], [True, True]) is None


def test_expected_digit_separates_one_from_ten():
    # P("1") = 0.5 of which P("10") = 0.4, so "1" alone is 0.1; the rest on "5"
    logprobs = [math.log(0.5)] + [-60.0] * 3 + [math.log(0.5)] + [-60.0] * 4 + [math.log(0.4)]
    value = expected_digit(logprobs)
    assert value == pytest.approx((1 * 0.1 + 5 * 0.5 + 10 * 0.4) / 1.0)


def test_yes_share_sums_the_spellings():
    assert yes_share([math.log(0.3), math.log(0.1)], [math.log(0.1), math.log(0.0 + 1e-300)]) == pytest.approx(0.8)


def test_the_yes_method_scores_one_plus_nine_p_yes(kb):
    backend = ScriptedLLM([{"yes": math.log(0.6), "no": math.log(0.2)}] * 2, probabilities=True)
    scorer = LLMStepScorer(backend, method="yes", log=False)
    raw = scorer.raw([LOGS, PLANKS], Goal(item="planks", count=4))
    assert raw == [pytest.approx(1 + 9 * 0.75)] * 2
    assert scorer.score([LOGS, PLANKS], Goal(item="planks", count=4)) == [8, 8]  # cached: no further call
    asked = backend.calls[0]
    assert asked.stop == ["yes", "Yes", "no", "No"]
    assert "Can step 1 (mine 4 logs) be done right after the steps before it?" in asked.last_user_message


def test_the_facts_method_shows_the_state_and_the_needs_of_the_step(kb):
    rules = Rules(kb)
    backend = ScriptedLLM([{"Yes": 0.0}] * 3, probabilities=True)
    scorer = LLMStepScorer(backend, method=ScoreMethod.YES_FACTS, rules=rules, log=False)
    scorer.raw([LOGS, PLANKS, TABLE], GOAL)
    second, third = backend.calls[1].last_user_message, backend.calls[2].last_user_message
    assert "Before step 2: layer 0 (surface); inventory: 4 logs." in second
    assert "Step 2 needs: 1 logs." in second
    assert "inventory: 3 logs, 4 planks." in third
    assert "Step 3 needs: 4 planks." in third


def test_the_needs_method_writes_each_need_beside_what_the_player_has(kb):
    rules = Rules(kb)
    backend = ScriptedLLM([{"no": 0.0}] * 3, probabilities=True)
    scorer = LLMStepScorer(backend, method=ScoreMethod.YES_NEEDS, rules=rules, log=False)
    short = [LOGS.model_copy(update={"count": 2}), PLANKS.model_copy(update={"count": 16}), TABLE]
    scorer.raw(short, GOAL)
    second = backend.calls[1].last_user_message
    assert "Before step 2: layer 0 (surface); inventory: 2 logs." in second  # the yes-facts line, kept
    assert "Step 2 needs: 4 logs (have 2)." in second  # the count beside the need: 2 short of 4
    assert "Can step 2 (craft 16 planks) be done right after the steps before it?" in second


def test_needs_beside_have_names_the_held_tool_the_station_the_layer_and_spare_fuel(kb):
    rules = Rules(kb)
    have = State.start({"wooden_pickaxe": 1, "stone_pickaxe": 1, "iron_ore": 3, "planks": 4})
    ore = needs_beside_have(rules, Step(type=StepType.MINE, item="iron_ore", count=1), have)
    assert ore == "a stone_pickaxe or better (have stone_pickaxe), being on layer 2 or deeper (on layer 0)"
    smelt = needs_beside_have(rules, Step(type=StepType.SMELT, item="iron_ingot", count=3), have)
    assert smelt.startswith("3 iron_ore (have 3), a furnace nearby (have 0), fuel for 3 items (have fuel for ")
    assert needs_beside_have(rules, Step(type=StepType.DIG_DOWN), State.start({})) == "a pickaxe (any tier) (have none)"
    assert needs_beside_have(rules, Step(type=StepType.CRAFT, item="no_such_thing", count=1), have) == ""


def test_needs_text_reads_the_action_schema(kb):
    rules = Rules(kb)
    pick = needs_text(rules, Step(type=StepType.CRAFT, item="stone_pickaxe", count=1))
    assert pick == "3 blackstone or cobblestone, 2 stick, a crafting_table nearby"  # either fills the slot
    assert "being on layer 2 or deeper" in needs_text(rules, Step(type=StepType.MINE, item="iron_ore", count=1))


def test_a_backend_without_probabilities_gets_the_digit_method_by_default(kb):
    plain = ScriptedLLM(["7"])
    scorer = LLMStepScorer(plain, method=None, log=False)
    assert scorer.method is ScoreMethod.DIGIT
    assert scorer.score([LOGS], Goal(item="logs", count=4)) == [7]
    with pytest.raises(ValueError, match="need token probabilities"):
        LLMStepScorer(ScriptedLLM([]), method="expected", log=False)
    with_rules = LLMStepScorer(ScriptedLLM([], probabilities=True), method=None, log=False, rules=Rules(kb))
    assert with_rules.method is ScoreMethod.EXPECTED  # the best measured (docs/step-scores.md)


def test_the_consistency_config_names_the_method():
    config = ConsistencyConfig(scores="llm", score_method="expected")
    assert config.score_method is ScoreMethod.EXPECTED
    assert "model read as expected" in config.describe()
    with pytest.raises(ValueError):
        ConsistencyConfig(score_method="loudest")


def test_a_failed_probability_call_leaves_no_score_and_two_stop_the_scorer():
    from barsym.llm import BackendTimeoutError

    backend = ScriptedLLM([BackendTimeoutError, BackendTimeoutError], probabilities=True)
    scorer = LLMStepScorer(backend, method="yes", log=False)
    assert scorer.raw([LOGS, PLANKS, TABLE], GOAL) == [None, None, None]
    assert scorer.down and len(backend.calls) == 2


def test_the_labelled_set_is_labelled_by_the_validator(kb, bar_tasks):
    validator = Validator(kb)
    items = labelled_steps(bar_tasks[:12], validator)
    assert items, "no labelled steps"
    faults = {x.fault for x in items}
    assert {"expert", "count cut in half", "step moved before its needs"} <= faults
    for x in items:
        failed = validator.validate(Plan(steps=x.steps), goal=x.goal).failed_steps
        assert x.good == (x.number not in failed)
        assert (x.simulator_score >= 4) == x.good  # a failing step scores 1-3, the simulator agrees
    assert all(x.good for x in items if x.fault == "expert")
    assert sum(not x.good for x in items) >= len(items) // 3  # both classes are there, about balanced


def test_the_dropped_set_drops_one_expert_step_and_labels_the_first_failure(kb, bar_tasks):
    validator = Validator(kb)
    items = dropped_steps(bar_tasks[:12], validator)
    by_task: dict = {}
    for x in items:
        by_task.setdefault(x.task, []).append(x)
    assert len(by_task) >= 10  # nearly every expert plan has a step whose drop breaks a later one
    for task in bar_tasks[:12]:
        chosen = by_task.get(task.key, [])
        if not chosen:
            continue
        plan = chosen[0].steps
        assert len(plan) == len(task.reference.steps) - 1
        failed = sorted(validator.validate(Plan(steps=plan), goal=task.goal).failed_steps)
        assert [x.number for x in chosen if not x.good] == failed[:1]  # the first failure, labelled bad
        assert all(x.good == (x.number not in failed) for x in chosen)


def test_moving_the_last_craft_to_the_front_breaks_its_needs():
    assert moved_before_needs([LOGS, PLANKS, TABLE]) == [TABLE, LOGS, PLANKS]
    assert moved_before_needs([LOGS]) is None


def test_the_state_method_shows_the_state_the_step_and_its_needs_without_the_plan(kb):
    rules = Rules(kb)
    backend = ScriptedLLM([{"no": 0.0}] * 3, probabilities=True)
    scorer = LLMStepScorer(backend, method=ScoreMethod.YES_STATE, rules=rules, log=False)
    assert scorer.raw([LOGS, PLANKS, TABLE], GOAL) == [pytest.approx(1.0)] * 3
    third = backend.calls[2].last_user_message
    assert third == (
        "Have: layer 0 (surface); inventory: 3 logs, 4 planks.\n"
        "Step: craft 1 crafting_table\n"
        "Needs: 4 planks.\n"
        "Can the step be done now?"
    )
    assert "mine 4 logs" not in third and "Task:" not in third  # the plan is not repeated
    with pytest.raises(ValueError, match="yes-state step scores need the rule book"):
        LLMStepScorer(ScriptedLLM([], probabilities=True), method="yes-state", log=False)


def test_the_state_method_names_every_tool_of_the_lowest_serving_tier(kb):
    rules = Rules(kb)
    mine = Step(type=StepType.MINE, item="cobblestone", count=1, tool="wooden_pickaxe")
    assert "a golden_pickaxe or better" in needs_text(rules, mine)  # yes-facts' wording, kept as it was
    assert "a golden_pickaxe or wooden_pickaxe or better" in needs_text(rules, mine, every_lowest_tool=True)


def test_a_model_that_declares_its_method_is_read_with_it(kb):
    rules = Rules(kb)
    declares = ScriptedLLM(probabilities=True, metadata={SCORE_METHOD_KEY: "yes-facts"})
    scorer = LLMStepScorer(declares, method=None, rules=rules, log=False)
    assert (scorer.method, scorer.method_text) == (ScoreMethod.YES_FACTS, "yes-facts, declared by the model")
    given = LLMStepScorer(declares, method="yes", rules=rules, log=False)
    assert (given.method, given.method_text) == (ScoreMethod.YES, "yes")


def test_a_declared_method_the_backend_cannot_serve_or_this_version_does_not_know_is_ignored():
    assert default_method(ScriptedLLM(probabilities=True)) == (ScoreMethod.EXPECTED, "default")
    unknown = ScriptedLLM(probabilities=True, metadata={SCORE_METHOD_KEY: "vibes"})
    assert default_method(unknown) == (ScoreMethod.EXPECTED, "default")
    no_probabilities = ScriptedLLM(metadata={SCORE_METHOD_KEY: "yes-facts"})
    assert default_method(no_probabilities) == (ScoreMethod.DIGIT, "server")


def test_the_shipped_adapter_s_card_names_the_method_measured_best_with_it(monkeypatch):
    """A taught method becomes the default only when it wins: the card of the shipped adapter can name another."""
    from barsym.llm.llamacpp import adapter

    declares = ScriptedLLM(probabilities=True, metadata={SCORE_METHOD_KEY: "yes-recall"})
    declares.adapter_path = adapter.SHIPPED
    monkeypatch.setattr(adapter, "read_card", lambda path=None: {"default_score_method": "yes-needs"})
    assert default_method(declares) == (ScoreMethod.YES_NEEDS, "card")
    monkeypatch.setattr(adapter, "read_card", lambda path=None: {"default_score_method": None})
    assert default_method(declares) == (ScoreMethod.YES_RECALL, "model")
    other = ScriptedLLM(probabilities=True, metadata={SCORE_METHOD_KEY: "yes-recall"})
    other.adapter_path = adapter.SHIPPED.with_name("mine.gguf")  # another adapter: its own declaration
    monkeypatch.setattr(adapter, "read_card", lambda path=None: {"default_score_method": "yes-needs"})
    assert default_method(other) == (ScoreMethod.YES_RECALL, "model")


def test_the_method_a_distilled_model_declares_is_the_verdict_kind_it_was_taught():
    from barsym.distill.verdicts import taught_score_method

    assert taught_score_method([{"kind": "yes-state"}, {"kind": "cot"}]) is ScoreMethod.YES_STATE
    assert taught_score_method([{"kind": "yes-state"}, {"kind": "yes-facts"}]) is ScoreMethod.YES_FACTS
    assert taught_score_method([{"kind": "yes-facts"}, {"kind": "yes-needs"}]) is ScoreMethod.YES_NEEDS
    assert taught_score_method([{"kind": "cot"}, {"kind": "bar"}]) is None
