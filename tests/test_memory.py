"""Stage memory: reuse, staleness, and the store's reliability (concurrent writers, foreign files)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3

import pytest

from barsym.memory import MemoryFileError, MemoryStore, record, with_memory
from barsym.memory.stats import MemoryStats
from barsym.memory.store import SCHEMA_VERSION, DecompositionRecord
from barsym.model import Goal
from barsym.planner.registry import make_planner


def _planned(kb, store, goal="iron_pickaxe", runs=10, successes=10):
    planner = with_memory(make_planner("symbolic", kb), kb, store)
    result = planner.plan(Goal(item=goal, count=1))
    record(store, goal, result, planner.memory, [("stochastic", 0, runs, successes)])
    return planner, result


def test_warm_memory_answers_every_goal_and_plans_stay_valid(kb, tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    planner, cold = _planned(kb, store)
    assert cold.stats.section(MemoryStats).hits == 0
    warm = planner.plan(Goal(item="iron_pickaxe", count=1))
    assert (
        warm.validation.valid
        and warm.stats.section(MemoryStats).misses == 0
        and warm.stats.section(MemoryStats).hits > 0
    )
    assert [str(s) for s in warm.plan.steps] == [str(s) for s in cold.plan.steps]
    answered = [n.decomposition for n in warm.nodes if n.decomposition]
    # every goal from memory, except those the plan's own spare units cover (its planner says so, without asking)
    assert {d.provenance for d in answered if d.yields != 0} == {"memory"}
    assert sum(d.yields == 0 for d in answered) == warm.stats.section(MemoryStats).spare > 0


def test_threshold_and_min_runs_keep_poor_entries_out(kb, tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    planner, _ = _planned(kb, store, runs=10, successes=2)  # 20 % < 50 %
    assert planner.plan(Goal(item="iron_pickaxe", count=1)).stats.section(MemoryStats).hits == 0
    store.clear()
    planner, _ = _planned(kb, store, runs=4, successes=4)  # fewer than 5 runs
    assert planner.plan(Goal(item="iron_pickaxe", count=1)).stats.section(MemoryStats).hits == 0


def test_better_executing_decomposition_wins(kb, tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    ctx = {"at_hand": [], "layer": 0}

    def sub(item, n):
        return {"item": item, "count": n}

    good = DecompositionRecord(
        "stick", 4, ctx, {"type": "craft", "item": "stick", "count": 4}, [sub("planks", 2)], None, "symbolic"
    )
    worse = DecompositionRecord(
        "stick",
        4,
        ctx,
        {"type": "craft", "item": "stick", "count": 4},
        [sub("planks", 2), sub("crafting_table", 1)],
        None,
        "llm",
    )
    store.record_plan("a", "bar", ("stick", 4), [], [worse], [("stochastic", 0, 10, 6)])
    store.record_plan("b", "bar", ("stick", 4), [], [good], [("stochastic", 0, 10, 9)])
    best = store.candidates("stick", 4)[0]
    assert best.signature == good.signature and best.rate == 0.9
    assert best.record == good and best.record.signature == best.signature  # the record as it was written


def test_entry_that_no_longer_verifies_is_refused_and_marked_stale(kb, tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    ctx = {"at_hand": [], "layer": 0}
    bad = DecompositionRecord(
        "stick",
        4,
        ctx,
        {"type": "craft", "item": "stick", "count": 4},
        [{"item": "cobblestone", "count": 2}],
        None,
        "llm",
    )
    store.record_plan("a", "bar", ("stick", 4), [], [bad], [("stochastic", 0, 10, 10)])
    planner = with_memory(make_planner("symbolic", kb), kb, store)
    result = planner.plan(Goal(item="stick", count=4))
    assert (
        result.validation.valid
        and result.stats.section(MemoryStats).stale == 1
        and result.stats.section(MemoryStats).hits == 0
    )
    assert store.counts()["stale"] == 1 and store.candidates("stick", 4) == []


def _writer(path, n):
    store = MemoryStore(path)
    rec = DecompositionRecord(
        "stick",
        4,
        {"at_hand": [], "layer": 0},
        {"type": "craft", "item": "stick", "count": 4},
        [{"item": "planks", "count": 2}],
        None,
        "symbolic",
    )
    for i in range(n):
        store.record_plan(f"t{i}", "symbolic", ("stick", 4), ["craft 4 stick"], [rec, rec], [("stochastic", i, 5, 5)])
    store.close()


def test_eight_processes_recording_at_once_lose_no_row(tmp_path):
    path = str(tmp_path / "m.sqlite")
    MemoryStore(path).close()
    procs = [multiprocessing.get_context("spawn").Process(target=_writer, args=(path, 25)) for _ in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    counts = MemoryStore(path, readonly=True).counts()
    assert counts["plans"] == 200 and counts["decompositions"] == 400 and counts["executions"] == 200


@pytest.mark.parametrize("kind", ["text", "other_sqlite", "newer", "corrupt", "folder"])
def test_foreign_files_are_refused_in_one_line_and_not_changed(tmp_path, kind):
    path = tmp_path / "m.sqlite"
    if kind == "text":
        path.write_text("hello, not a database\n" * 20)
    elif kind == "other_sqlite":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE t(x)")
        db.commit()
        db.close()
    elif kind == "newer":
        db = sqlite3.connect(path)
        db.execute(f"PRAGMA application_id={0x4253594D}")
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
        db.execute("CREATE TABLE future(x)")
        db.commit()
        db.close()
    elif kind == "corrupt":
        MemoryStore(path).close()
        data = bytearray(path.read_bytes())
        data[100:4096] = b"\xff" * (4096 - 100)
        path.write_bytes(bytes(data))
    else:
        path.mkdir()
    before = None if kind == "folder" else path.read_bytes()
    with pytest.raises(MemoryFileError) as info:
        MemoryStore(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    if before is not None:
        assert path.read_bytes() == before


def test_export_import_round_trip(kb, tmp_path):
    store = MemoryStore(tmp_path / "a.sqlite")
    _planned(kb, store)
    lines = [json.dumps(r) for r in store.export_plans()]
    other = MemoryStore(tmp_path / "b.sqlite")
    for line in lines:
        other.import_plan(json.loads(line))
    assert other.counts() == store.counts()
    with pytest.raises(ValueError):
        other.import_plan({"task": "x"})


def test_stale_entry_in_a_memory_opened_read_only_is_refused_and_the_file_untouched(kb, tmp_path):
    path = tmp_path / "m.sqlite"
    ctx = {"at_hand": [], "layer": 0}
    bad = DecompositionRecord(
        "stick",
        4,
        ctx,
        {"type": "craft", "item": "stick", "count": 4},
        [{"item": "cobblestone", "count": 2}],
        None,
        "llm",
    )
    with MemoryStore(path) as store:
        store.record_plan("a", "bar", ("stick", 4), [], [bad], [("stochastic", 0, 10, 10)])
    before = path.read_bytes()
    store = MemoryStore(path, readonly=True)  # `barsym plan --memory M` without --record
    result = with_memory(make_planner("symbolic", kb), kb, store).plan(Goal(item="stick", count=4))
    assert (
        result.validation.valid
        and result.stats.section(MemoryStats).stale == 1
        and result.stats.section(MemoryStats).hits == 0
    )
    assert store.candidates("stick", 4) == [] and store.counts()["stale"] == 1  # refused for the rest of the run
    store.close()
    assert path.read_bytes() == before


def test_warm_memory_plans_are_the_planners_own_not_wasteful(kb, tmp_path):
    """Remembered answers must not re-make what an earlier batch of the same plan left spare (planks, sticks)."""
    from barsym.eval import load_dataset
    from testdata import BAR_DIR

    if not BAR_DIR.exists():
        pytest.skip("BAR dataset not available")
    tasks = load_dataset(BAR_DIR, kb)
    store = MemoryStore(tmp_path / "m.sqlite")
    recording = with_memory(make_planner("symbolic", kb), kb, None)
    plain = {}
    for task in tasks:
        result = recording.plan(task.goal)
        plain[task.key] = [str(s) for s in result.plan.steps]
        record(store, task.key, result, recording.memory, [("stochastic", 0, 10, 9)])
    planner = with_memory(make_planner("symbolic", kb), kb, store)
    hits = 0
    for task in tasks:
        result = planner.plan(task.goal)
        assert result.validation.verdict.value == "valid", task.key
        assert [str(s) for s in result.plan.steps] == plain[task.key], task.key
        hits += result.stats.section(MemoryStats).hits
        assert result.stats.section(MemoryStats).misses == 0, task.key
    assert hits > 1000
