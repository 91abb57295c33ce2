"""The store under processes that die or read while others write.

Every test meets the writer *inside* its transaction deterministically: the
executions of a plan are passed as an iterable that, once the plan and its
decompositions are written but not committed, signals and waits. No test
depends on timing: what would be "wait a bit" is an event.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3

import pytest

from barsym.memory import MemoryStore
from barsym.memory.store import DecompositionRecord

SPAWN = multiprocessing.get_context("spawn")
PER_PLAN = 12  # decompositions in every test plan


def _records(n: int = PER_PLAN) -> list[DecompositionRecord]:
    return [
        DecompositionRecord(
            "stick",
            4 + i,
            {"at_hand": [], "layer": 0},
            {"type": "craft", "item": "stick", "count": 4 + i},
            [{"item": "planks", "count": 2}],
            None,
            "symbolic",
        )
        for i in range(n)
    ]


class _PauseInside:
    """Executions that signal ``inside`` and wait for ``go`` when the store iterates them (mid-transaction)."""

    def __init__(self, inside, go):
        self.inside, self.go = inside, go

    def __iter__(self):
        self.inside.set()
        self.go.wait(120)
        yield ("stochastic", 0, 5, 5)


def _write_one_paused(path, inside, go):
    store = MemoryStore(path)
    store.record_plan("paused", "symbolic", ("stick", 4), ["craft 4 stick"], _records(), _PauseInside(inside, go))
    store.close()


def _write_forever(path, started):
    store = MemoryStore(path)
    number = 0
    while True:
        store.record_plan(f"t{number}", "symbolic", ("stick", 4), ["craft 4 stick"], _records(), [("w", number, 5, 5)])
        number += 1
        if number == 20:
            started.set()


def _consistent(path) -> tuple[int, int, int]:
    """Plans, decompositions and executions in one snapshot, after SQLite's own integrity check."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        return db.execute(
            "SELECT (SELECT count(*) FROM plans), (SELECT count(*) FROM decompositions),"
            " (SELECT count(*) FROM executions)"
        ).fetchone()
    finally:
        db.close()


def _seed_store(path, plans: int) -> None:
    with MemoryStore(path) as store:
        for i in range(plans):
            store.record_plan(f"s{i}", "symbolic", ("stick", 4), ["craft 4 stick"], _records(), [("w", i, 5, 5)])


def test_a_process_killed_inside_a_write_transaction_leaves_the_file_consistent(tmp_path):
    path = str(tmp_path / "m.sqlite")
    _seed_store(path, 3)
    inside, go = SPAWN.Event(), SPAWN.Event()
    writer = SPAWN.Process(target=_write_one_paused, args=(path, inside, go))
    writer.start()
    assert inside.wait(120), "the writer never reached its transaction"
    writer.kill()  # SIGKILL: no rollback, no close, the write lock held
    writer.join(60)
    assert writer.exitcode == -9
    assert _consistent(path) == (3, 3 * PER_PLAN, 3)  # the half-written plan is gone
    with MemoryStore(path) as store:  # the lock died with the process: the next writer goes ahead
        store.record_plan("after", "symbolic", ("stick", 4), [], _records(), [("w", 9, 5, 5)])
        assert store.counts()["plans"] == 4


def test_a_process_killed_at_any_point_of_a_stream_of_writes_leaves_whole_plans_only(tmp_path):
    path = str(tmp_path / "m.sqlite")
    MemoryStore(path).close()
    started = SPAWN.Event()
    writer = SPAWN.Process(target=_write_forever, args=(path, started))
    writer.start()
    assert started.wait(120)
    writer.kill()
    writer.join(60)
    plans, decompositions, executions = _consistent(path)
    assert plans >= 20 and decompositions == plans * PER_PLAN and executions == plans


def _read_while_paused(path, inside, go, seen):
    """Reads once while the writer is inside its transaction, lets it commit, and reads again."""
    reader = MemoryStore(path, readonly=True)
    inside.wait(120)
    seen.put(
        ("inside", reader.counts()["plans"], reader.counts()["decompositions"], len(reader.candidates("stick", 4)))
    )
    go.set()


def test_a_reader_in_another_process_sees_none_or_all_of_a_plan(tmp_path):
    path = str(tmp_path / "m.sqlite")
    _seed_store(path, 2)
    inside, go, seen = SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
    writer = SPAWN.Process(target=_write_one_paused, args=(path, inside, go))
    reader = SPAWN.Process(target=_read_while_paused, args=(path, inside, go, seen))
    reader.start()
    writer.start()
    for p in (writer, reader):
        p.join(120)
        assert p.exitcode == 0
    assert seen.get(timeout=10) == ("inside", 2, 2 * PER_PLAN, 1)  # none of the plan being written
    assert _consistent(path) == (3, 3 * PER_PLAN, 3)  # and all of it once committed
    with MemoryStore(path, readonly=True) as store:
        assert store.candidates("stick", 4)[0].plans == 3


def _poll(path, enough, stop, seen):
    reader = MemoryStore(path, readonly=True)
    polls = bad = 0
    states = set()
    while not stop.is_set():
        counts = reader.counts()
        polls += 1
        states.add(counts["plans"])
        bad += counts["decompositions"] != counts["plans"] * PER_PLAN or counts["executions"] != counts["plans"]
        if polls == 200:
            enough.set()
    seen.put((polls, len(states), bad))


def test_counts_read_one_snapshot_while_a_writer_streams(tmp_path):
    path = str(tmp_path / "m.sqlite")
    MemoryStore(path).close()
    started, enough, stop, seen = SPAWN.Event(), SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
    writer = SPAWN.Process(target=_write_forever, args=(path, started))
    writer.start()
    assert started.wait(120)
    reader = SPAWN.Process(target=_poll, args=(path, enough, stop, seen))
    reader.start()
    assert enough.wait(120)  # 200 polls made while the writer kept committing
    stop.set()
    reader.join(120)
    writer.kill()
    writer.join(60)
    polls, states, bad = seen.get(timeout=10)
    assert polls >= 200 and bad == 0  # (states: how many different plan counts it saw; reported, not required)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_file_is_refused_for_writing_but_readable(tmp_path):
    path = tmp_path / "m.sqlite"
    _seed_store(str(path), 1)
    path.chmod(0o444)
    with pytest.raises(Exception) as info:
        MemoryStore(path)
    assert "read-only" in str(info.value)
    with MemoryStore(path, readonly=True) as store:
        assert store.counts()["plans"] == 1
