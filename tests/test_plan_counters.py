"""The summary's counters say what the step tags say, on every planner (issue 35, item 1).

``barsym plan torch --start iron_pickaxe=1`` printed every step tagged
``[symbolic-fallback]`` under a summary of "symbolic fallback 0": the plan-level
fallback was counted nowhere. These tests read both the printed plan (its tags
and its summary line) and the JSON (its tree and its stats), for each planner.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from cli_run import run

START = ("torch", "--start", "iron_pickaxe=1", "--llm-stand-in", "copy-facts")
TAG = re.compile(r"^ *\d+\. (?!inventory:).*\[([^\]]+)\]", re.M)  # a step line, not a chain of thought's inventory
#: a goal's provenance in the tree -> the counter of the model's stats that counts it
COUNTERS = {
    "llm": "accepted_first_try",
    "llm-after-feedback": "accepted_after_feedback",
    "symbolic-fallback": "fallbacks",
    "context": "context_answers",
    "graph": "graph_forced",
}


def _provenances(node: dict) -> Counter:
    found = Counter([node["provenance"]] if "provenance" in node else [])
    for child in node.get("subgoals", []):
        found += _provenances(child)
    return found


def _summary_number(text: str, words: str) -> int:
    match = re.search(rf"{words} (\d+)", text)
    assert match, (words, text)
    return int(match.group(1))


@pytest.mark.parametrize("planner", ["symbolic", "bar", "llm-only", "bar-sc"])
def test_a_held_tool_needs_no_fallback_and_the_counters_match_the_tags(capsys, planner):
    """copy-facts copies the facts it is given: the decomposers get them with --facts (deps and cot take none
    since issue 54, so a stand-in has nothing to copy there)."""
    extra = ("--facts",) if planner != "symbolic" else ()
    code, text, _ = run(capsys, "plan", *START, "--planner", planner, *extra)
    assert code == 0, text
    tags = Counter(tag.strip() for group in TAG.findall(text) for tag in group.split(","))
    assert tags and "symbolic-fallback" not in tags, tags
    assert "plan-level fallback" not in text
    if planner == "bar":
        assert _summary_number(text, "symbolic fallback") == 0
    code, out, _ = run(capsys, "plan", *START, "--planner", planner, *extra, "--format", "json")
    data = json.loads(out)
    stats, tree = data["stats"], _provenances(data["tree"])
    for provenance, counter in COUNTERS.items():
        if counter in stats and planner in ("bar", "llm-only", "bar-sc"):
            assert stats[counter] == tree[provenance], (counter, stats[counter], tree)
    assert stats.get("fallbacks", 0) == 0 and stats.get("plan_fallback") is None
    step_tags = Counter(tag for step in data["steps"] for tag in step["provenance"])
    assert step_tags.keys() == tags.keys()


def test_a_plan_level_fallback_is_counted_in_the_summary_and_the_json(kb, monkeypatch):
    planner = make_planner("bar", kb, llm_stand_in="copy-facts", log=False)

    def broken(goal, start=None):  # the model's answers pass one by one but the whole plan fails
        raise PlanningError("invalid", f"{goal.item}: the plan fails validation at step 2: a test says so")

    monkeypatch.setattr(planner.inner.inner, "plan", broken)
    result = planner.plan(Goal(item="stone_pickaxe", count=1))
    tags = [tag for i in range(len(result.plan)) for tag in result.provenance(i)]
    decided = sum(node.decomposition is not None for node in result.nodes)
    assert set(tags) == {"symbolic-fallback"} and decided >= len(result.plan)
    llm = result.stats.model
    assert (llm.fallbacks, llm.plan_fallbacks, llm.accepted_first_try, llm.graph_forced) == (decided, 1, 0, 0)
    record = result.to_dict()["stats"]
    assert record["fallbacks"] == decided and record["plan_fallbacks"] == 1 and record["plan_fallback"]
    text = result.to_text()
    assert f"plan-level fallback: all {decided} goals answered by the symbolic planner" in text
    assert "symbolic fallback 0" not in text
