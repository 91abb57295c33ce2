"""``PlanResult.stats`` is typed (:class:`PlanStats`), and its JSON is what the dict used to be.

Run files written before the stats were typed are read back by resumed runs
and ``barsym report``: the lines pinned here come from such files (a bar,
bar-sc and symbolic run of the scale benchmark) or were printed by the
planners just before the change (deps, cot, memory, a dead backend), with
the seconds set to 0.25. Each must read back and write out unchanged, key
order included (``plan --json`` and ``eval --json`` do not sort keys).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from barsym.consistency.stats import RepairStats
from barsym.eval.dataset import Task
from barsym.eval.spec import outcome_from_record
from barsym.memory.stats import MemoryStats
from barsym.model import Goal
from barsym.planner import make_planner
from barsym.planner import stats as stats_module
from barsym.planner.stats import LLMStats, PlanStats, register_section
from barsym.reasoning.planners.forward.stats import DepsSummary

LLM = (
    '"context_answers": 0, "graph_forced": 0, "llm_goals": 1, "llm_calls": 3, "reused_replies": 0, "retries": 0, '
    '"accepted_first_try": 0, "accepted_after_feedback": 1, "accepted_calls": 0, "max_accepted_calls_per_goal": 0, '
    '"rejected": 0, "unreadable": 0, "backend_errors": 0, "fallbacks": 0, "unanswered": 0, "loops_cut": 0, '
    '"prompt_tokens": 1100, "completion_tokens": 35, "evaluated_prompt_tokens": 1100, "cached_prompt_tokens": 0, '
    '"evaluations": 38, "drafted_tokens": 0, "prefix": "", "prefix_seconds": 0.25, "llm_seconds": 0.25'
)
TREE = '"goals": 13, "decompositions": 13, "shared_stations": true, "attempts": 1, "seconds": 0.25, "held_materials_used": true'

OLD = {
    "bar-sc (run file)": '{"accepted_after_feedback": 0, "accepted_calls": 3, "accepted_first_try": 3, "attempts": 1, '
    '"backend_errors": 0, "cached_prompt_tokens": 3003, "completion_tokens": 40, "consistency": {"evaluated_prompt_tokens": 0, '
    '"kept_steps": 7, "llm_calls": 0, "repair_forced": 0, "repair_llm_calls": 0, "repaired_steps": 0, "replayed_seconds": 0.0, '
    '"rounds": 0, "scoring_forced": 0, "scoring_llm_calls": 0, "seconds": 0.00017, "symbolic_fallbacks": 0, '
    '"unfinished_windows": 0, "valid_after": true, "valid_before": true, "windows": 0}, "context_answers": 0, '
    '"decompositions": 11, "drafted_tokens": 31, "evaluated_prompt_tokens": 143, "evaluations": 12, "fallbacks": 0, '
    '"goals": 11, "graph_forced": 8, "held_materials_used": true, "llm_calls": 3, "llm_goals": 3, "llm_mode": "graph", '
    '"llm_seconds": 2.209, "llm_verified": false, "loops_cut": 0, "max_accepted_calls_per_goal": 1, "plan_fallback": null, '
    '"prefix": "disk", "prefix_seconds": 0.123, "problems": [], "prompt_tokens": 3146, "rejected": 0, "retries": 0, '
    '"reused_replies": 0, "seconds": 2.236841, "shared_stations": true, "unanswered": 0, "unreadable": 0}',
    "symbolic (run file)": '{"attempts": 1, "decompositions": 11, "goals": 12, "held_materials_used": true, '
    '"seconds": 0.059919, "shared_stations": true}',
    "search": '{"goals": 1, "decompositions": 1, "seconds": 0.25}',
    "deps": '{"goals": 1, ' + LLM + ', "problems": [], "llm_mode": "vocab", "llm_verified": false, "seconds": 0.25, '
    '"deps": {"rounds": 2, "success_round": 1, "stopped": "succeeded", "dropped_rounds": 0, "world": "deterministic", '
    '"selector": "order"}}',
    "cot": '{"goals": 1, ' + LLM + ', "problems": [], "llm_mode": "vocab", "llm_verified": false, "seconds": 0.25, '
    '"cot": {"steps": 0, "inventory_agreement": 0, "unreadable_lines": 2}}',
    "bar, dead backend, memory": "{" + TREE + ", " + LLM + ', "problems": ["down"], "plan_fallback": null, '
    '"llm_mode": "graph", "llm_verified": true, "backend_down": "2 failures in a row, last: down", "memory_hits": 0, '
    '"memory_misses": 12, "memory_stale": 0, "memory_share": 0.0, "memory_examples": 0, "memory_spare": 1}',
    "symbolic+sc, memory": "{" + TREE + ', "consistency": {"rounds": 0, "windows": 0, "repaired_steps": 0, '
    '"kept_steps": 8, "unfinished_windows": 0, "symbolic_fallbacks": 0, "valid_before": true, "valid_after": true, '
    '"seconds": 0.25, "llm_calls": 0, "evaluated_prompt_tokens": 0, "replayed_seconds": 0.25}, "memory_hits": 0, '
    '"memory_misses": 12, "memory_stale": 0, "memory_share": 0.0, "memory_examples": 0, "memory_spare": 1}',
}


@pytest.mark.parametrize("name", OLD)
def test_old_stats_read_back_and_write_out_unchanged(name):
    old = json.loads(OLD[name])
    again = PlanStats.from_dict(old).to_dict()
    assert again == old
    if "run file" not in name:  # run files sort their keys; these were printed in the planners' order
        assert list(again) == list(old)


def test_sections_are_typed():
    bar_sc = PlanStats.from_dict(json.loads(OLD["bar-sc (run file)"]))
    assert bar_sc.llm.llm_calls == 3 and bar_sc.llm.prefix == "disk" and bar_sc.llm_verified is False
    repair = bar_sc.section(RepairStats)
    assert repair.kept_steps == 7 and repair.valid_after and bar_sc.decompositions == 11
    deps = PlanStats.from_dict(json.loads(OLD["deps"]))
    assert deps.section(DepsSummary).success_round == 1 and deps.decompositions is None and deps.plan_fallback is None
    dead = PlanStats.from_dict(json.loads(OLD["bar, dead backend, memory"]))
    assert dead.backend_down.startswith("2 failures") and dead.section(MemoryStats) == MemoryStats(misses=12, spare=1)
    symbolic = PlanStats.from_dict(json.loads(OLD["symbolic (run file)"]))
    assert symbolic.llm is None and symbolic.model == LLMStats() and symbolic.counters()["goals"] == 12


def test_unknown_keys_are_kept():
    old = {**json.loads(OLD["search"]), "from_a_later_version": [1, 2]}
    stats = PlanStats.from_dict(old)
    assert stats.extra == {"from_a_later_version": [1, 2]} and stats.to_dict() == old


def test_the_summed_counters_are_the_int_fields():
    assert "max_accepted_calls_per_goal" not in LLMStats.summed() and "llm_seconds" not in LLMStats.summed()
    assert set(LLMStats.summed()) == {f.name for f in dataclasses.fields(LLMStats) if f.type == "int"} - {
        "max_accepted_calls_per_goal"
    }


def test_stats_are_frozen(kb):
    result = make_planner("symbolic", kb).plan(Goal(item="stick"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.stats.seconds = 0.0
    assert list(result.stats.to_dict()) == [
        "goals",
        "decompositions",
        "shared_stations",
        "attempts",
        "seconds",
        "held_materials_used",
        "loop_checks",
    ]


def test_an_old_run_file_record_resumes_with_typed_stats(kb):
    """What a resumed ``barsym eval --run`` does with a record: rebuild the outcome, write the record again."""
    stats = json.loads(OLD["bar-sc (run file)"])
    record = {
        "group": "stone",
        "goal": {"item": "stick", "count": 1},
        "seconds": 2.2,
        "planned": True,
        "plan": [
            {"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": None},
            {"type": "craft", "obj_name": "planks", "obj_num": 4, "tool": None},
            {"type": "craft", "obj_name": "stick", "obj_num": 4, "tool": None},
        ],
        "stats": stats,
    }
    outcome = outcome_from_record(record, Task("stick", "stone", Goal(item="stick")), kb)
    assert outcome.result.stats.llm.accepted_first_try == 3
    assert outcome.to_dict()["stats"] == stats


@dataclasses.dataclass(frozen=True)
class _Later:
    """A section of a module that registers it only after a record was read (its package not yet loaded)."""

    n: int = 0

    def to_dict(self) -> dict:
        return {"n": self.n}

    @classmethod
    def from_dict(cls, data: dict) -> "_Later":
        return cls(data.get("n", 0))

    def lines(self) -> list[str]:
        return [f"later: {self.n}"]


def test_a_section_read_before_its_package_is_loaded_stays_as_it_was(monkeypatch):
    monkeypatch.setattr(stats_module, "_SECTIONS", dict(stats_module._SECTIONS))
    monkeypatch.setattr(stats_module, "_NAMES", dict(stats_module._NAMES))
    old = {**json.loads(OLD["search"]), "later": {"n": 3}}
    early = PlanStats.from_dict(old)
    assert early.extra == {"later": {"n": 3}} and early.to_dict() == old  # kept, written out again
    register_section("later", _Later, order=60)
    assert early.section(_Later) == _Later(3)  # read from where it was kept
    again = PlanStats.from_dict(old)
    assert again.extra == {} and again.sections == {"later": _Later(3)} and again.to_dict() == old
    assert PlanStats().section(_Later) is None and early.with_section(_Later(4)).to_dict()["later"] == {"n": 4}


def test_sections_keep_their_places_whoever_added_them_first():
    """The memory wraps the repair, but its keys follow the nested sections and its line comes first."""
    stats = PlanStats(seconds=0.25).with_section(RepairStats(valid_before=False, rounds=1))
    stats = stats.with_section(MemoryStats(hits=2, misses=2))
    assert list(stats.to_dict())[:2] == ["seconds", "consistency"] and "memory_hits" in stats.to_dict()
    lines = stats.section_lines()
    assert [line.split(":")[0] for line in lines] == ["memory", "state consistency"]
