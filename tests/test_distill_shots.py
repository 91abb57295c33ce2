"""barsym distill's ``bar-shots`` kind: BAR's prompt without facts, one more few-shot turn, nothing held out shown."""

from __future__ import annotations

import random

import pytest

from barsym.distill.data import DataGenerator
from barsym.distill.goals import held_out_items
from barsym.distill.shots import with_shot
from barsym.planner.registry import graph_for
from barsym.reasoning.grammars.reply_grammar import parse_reply
from barsym.reasoning.planners.backward.llm_planners import bar_planner
from barsym.reasoning.spec import PlannerSpec


@pytest.fixture(scope="module")
def kb():
    from barsym.kb import load_kb

    return load_kb()


@pytest.fixture(scope="module")
def rows(kb):
    return list(DataGenerator(kb, seed=4).generate(40, {"bar-shots": 1.0}))


def _turns(messages):
    return [(messages[i]["content"], messages[i + 1]["content"]) for i in range(1, len(messages) - 1, 2)]


@pytest.fixture(scope="module")
def real(kb):
    """The few-shot turns BAR's decomposer sends without facts."""
    planner = bar_planner(kb, PlannerSpec.of("bar", {"backend": None, "facts": False, "graph": graph_for(kb)}))
    prefix = list(planner.decomposer.prompts.prefix)
    return prefix[0], _turns(prefix + [{"role": "user", "content": ""}])


def _inserted(row, turns) -> int:
    return next(i for i, t in enumerate(_turns(row["messages"])) if i >= len(turns) or t != turns[i])


def test_each_example_is_bars_no_facts_prompt_with_one_more_turn_among_its_later_turns(kb, rows, real):
    system, turns = real
    assert len(rows) == 40
    for row in rows:
        messages = row["messages"]
        assert row["kind"] == "bar-shots" and messages[0] == system
        got = _turns(messages)
        extra = _inserted(row, turns)
        assert len(got) == len(turns) + 1 and got[:extra] + got[extra + 1 :] == turns  # the prompt's own, in order
        assert extra >= len(turns) // 2  # among the later turns, where the crafts are
        assert messages[-1]["content"] == f"Goal: {row['count']} {row['goal']}"
        assert parse_reply(row["reply"], kb) is not None and parse_reply(got[extra][1], kb) is not None


def test_no_held_out_item_is_asked_or_shown_and_most_turns_show_the_asked_item(kb, rows, real):
    held = held_out_items(kb)
    _, turns = real
    own = 0
    for row in rows:
        shown = _turns(row["messages"])[_inserted(row, turns)][0].split()[-1]
        assert row["goal"] not in held and shown not in held
        own += shown == row["goal"]
    assert len(rows) // 2 <= own < len(rows)  # the answer is in the prompt in most examples, not in all


def test_the_turn_goes_between_turns_and_leaves_the_example_as_it_was():
    example = {"kind": "bar-nofacts", "goal": "x", "count": 1, "reply": "r", "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Goal: 1 a"}, {"role": "assistant", "content": "A"},
        {"role": "user", "content": "Goal: 1 b"}, {"role": "assistant", "content": "B"},
        {"role": "user", "content": "Goal: 1 x"},
    ]}  # fmt: skip
    seen = set()
    for seed in range(20):
        out = with_shot(example, ("Goal: 2 x", "X"), random.Random(seed))
        contents = [m["content"] for m in out["messages"]]
        seen.add(contents.index("Goal: 2 x"))
        assert contents.count("X") == 1 and out["kind"] == "bar-shots" and len(example["messages"]) == 6
    assert seen == {3, 5}  # after the first of two turns or after both: never before the first
