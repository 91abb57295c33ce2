"""Few-shot examples from close goals: which goals are close, what the model is shown, and that it is still checked."""

from __future__ import annotations

import pytest

from barsym.llm import ScriptedLLM
from barsym.memory import MemoryStore, record, with_memory
from barsym.memory.examples import closeness
from barsym.memory.stats import MemoryStats
from barsym.memory.store import DecompositionRecord
from barsym.model import Goal
from barsym.planner import PlanContext, SymbolicDecomposer, layer_goal
from barsym.planner.registry import make_planner
from barsym.reasoning.grammars.reply_grammar import render_reply
from barsym.testing.fakes import asked as asked_goal


def _symbolic_answer(kb):
    symbolic = SymbolicDecomposer(kb, prefer=kb.prefer)

    def answer(call):
        asked = asked_goal(call.last_user_message)
        count, _, item = asked.partition(" ")
        goal = layer_goal(int(item)) if count == "layer" else Goal(item=item, count=int(count))
        return render_reply(symbolic.decompose(goal, PlanContext(kb, Goal(item="diamond_pickaxe"))))

    return answer


@pytest.fixture
def store(kb, tmp_path):
    """A memory holding one symbolic iron_pickaxe plan that succeeded 10 times in 10."""
    store = MemoryStore(tmp_path / "m.sqlite")
    planner = with_memory(make_planner("symbolic", kb), kb, None)
    result = planner.plan(Goal(item="iron_pickaxe"))
    record(store, "iron/iron_pickaxe", result, planner.memory, [("stochastic", 0, 10, 10)])
    return store


def test_close_goals_share_the_step_kind_and_a_recipe_shape_or_a_family(kb):
    axe = closeness(kb, "iron_axe", "iron_pickaxe")
    assert axe.same_shape and axe.shared_words == ("iron",)
    gold = closeness(kb, "golden_pickaxe", "iron_pickaxe")
    assert gold.same_shape and gold.shared_words == ("pickaxe",)
    assert closeness(kb, "stick", "iron_pickaxe") is None  # another recipe shape, no common word
    assert closeness(kb, "iron_ingot", "iron_pickaxe") is None  # smelted, not crafted
    assert closeness(kb, "iron_axe", "iron_pickaxe").score > closeness(kb, "diamond_pickaxe", "stone_axe").score


def test_examples_appear_before_the_question_and_every_answer_is_still_checked(kb, store):
    no_table = "craft 1 iron_axe: 3 iron_ingot, 2 stick"  # the verifier refuses it: 3x3 recipes need a table
    right = "craft 1 iron_axe: 3 iron_ingot, 2 stick, 1 crafting_table"
    fake = ScriptedLLM([no_table, right])
    planner = with_memory(make_planner("bar", kb, backend=fake, log=False), kb, store)
    result = planner.plan(Goal(item="iron_axe"))
    assert fake.remaining == 0 and len(fake.calls) == 2  # only iron_axe went to the model; memory did the rest
    prefix = list(planner.planner.decomposer.prompts.prefix)
    first = fake.calls[0].messages
    assert first[: len(prefix)] == prefix  # the fixed, cached prefix is untouched
    shown = first[len(prefix) :]
    assert [m["role"] for m in shown] == ["user", "assistant"] * 2 + ["user"]  # two examples, then the question
    assert asked_goal(shown[0]["content"]) == "1 stone_pickaxe"  # same shape only
    assert asked_goal(shown[2]["content"]) == "1 iron_pickaxe"  # same shape and family: closest, so last
    assert shown[3]["content"] == "craft 1 iron_pickaxe: 3 iron_ingot, 2 stick, 1 crafting_table"
    assert asked_goal(shown[4]["content"]) == "1 iron_axe"
    assert "crafting_table" in fake.calls[1].last_user_message  # the refusal went back with the reason
    root = result.nodes[0].decomposition
    assert root.provenance == "llm-after-feedback" and str(root.step) == "craft 1 iron_axe"
    assert result.validation.valid and result.stats.llm.rejected == 1
    assert result.stats.section(MemoryStats).examples == 1 and result.stats.section(MemoryStats).hits > 0


def test_poorly_executing_or_stale_examples_are_not_shown(kb, tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    ctx = {"at_hand": [], "layer": 0}
    broken = DecompositionRecord(
        "iron_pickaxe",
        1,
        ctx,
        {"type": "craft", "item": "iron_pickaxe", "count": 1},
        [{"item": "cobblestone", "count": 3}, {"item": "stick", "count": 2}],
        None,
        "llm",
    )
    store.record_plan("a", "bar", ("iron_pickaxe", 1), [], [broken], [("stochastic", 0, 10, 10)])
    rare = DecompositionRecord(
        "iron_shovel",
        1,
        ctx,
        {"type": "craft", "item": "iron_shovel", "count": 1},
        [{"item": "iron_ingot", "count": 1}, {"item": "stick", "count": 2}, {"item": "crafting_table", "count": 1}],
        None,
        "llm",
    )
    store.record_plan("b", "bar", ("iron_shovel", 1), [], [rare], [("stochastic", 0, 10, 2)])  # 20 % success
    fake = ScriptedLLM([_symbolic_answer(kb)] * 40)  # answers every goal as the symbolic decomposer would
    planner = with_memory(make_planner("bar", kb, backend=fake, log=False), kb, store)
    assert planner.plan(Goal(item="iron_axe"), None).validation.valid
    assert asked_goal(fake.calls[0].last_user_message) == "1 iron_axe"
    assert all(
        "iron_pickaxe" not in m["content"] and "iron_shovel" not in m["content"]
        for m in fake.calls[0].messages[len(planner.planner.decomposer.prompts.prefix) :]
    )
    assert store.counts()["stale"] == 1  # the entry that no longer verifies was marked, not shown


@pytest.mark.parametrize("name", ["bar", "bar-sc"])
def test_a_warm_memory_answers_in_front_of_the_llm_planners_without_a_call(kb, store, name):
    fake = ScriptedLLM([])  # any call would raise: the memory must answer every goal
    planner = with_memory(make_planner(name, kb, backend=fake, log=False), kb, store)
    result = planner.plan(Goal(item="iron_pickaxe"))
    assert result.validation.valid and fake.calls == []
    assert result.stats.section(MemoryStats).misses == 0 and result.stats.section(MemoryStats).hits > 0
