"""The migration runner both SQLite files use (:mod:`barsym.sqlite_migrations`), and the files of today's code.

A memory or call log written before the runner has no ``_migrations`` table: it must open, read-only and for
writing, and upgrade without losing a row. The files here are made the way barsym made them before the
runner (its schema code, copied below as it was at f4e35c4), filled with rows, then opened by today's stores.
"""

from __future__ import annotations

import sqlite3

import pytest

from barsym.memory import MemoryFileError, MemoryStore, record, with_memory
from barsym.memory.memory_file import APPLICATION_ID
from barsym.memory.stats import MemoryStats
from barsym.model import Goal
from barsym.planner.registry import make_planner
from barsym.reasoning.calls.call_log import CallLog, LogError
from barsym.sqlite_migrations import TABLE, Migrations, run_script

# ----------------------------------------------------------------- the runner


def _toy(*names: str, fail: str | None = None, legacy=None) -> Migrations:
    """A list of migrations that each add a table named after them (``fail``: that one raises half-way)."""
    migrations = Migrations(legacy=legacy)
    for name in names:

        def step(db, name=name):
            db.execute(f"CREATE TABLE {name} (x)")
            if name == fail:
                raise RuntimeError(f"{name} failed")

        step.__name__ = name
        migrations(step)
    return migrations


def _tables(db) -> set[str]:
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_each_migration_runs_once_and_is_recorded_by_name(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    assert _toy("a", "b").apply(db) == ["a", "b"]
    assert _toy("a", "b").apply(db) == []  # a second open runs nothing
    assert _toy("a", "b", "c").apply(db) == ["c"]  # a new one at the end: only it
    assert [n for (n,) in db.execute(f"SELECT name FROM {TABLE} ORDER BY rowid")] == ["a", "b", "c"]
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    assert _tables(db) == {"a", "b", "c", TABLE}


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    _toy("a").apply(db)
    with pytest.raises(RuntimeError, match="b failed"):
        _toy("a", "b", "c", fail="b").apply(db)
    assert not db.in_transaction
    assert _tables(db) == {"a", TABLE} and _toy("a", "b").pending(db) == ["b"]


def test_names_a_newer_barsym_recorded_are_unknown(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    _toy("a", "b").apply(db)
    assert _toy("a").unknown(db) == ["b"] and _toy("a", "b").unknown(db) == []


def test_legacy_migrations_are_recorded_not_run(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    db.execute("CREATE TABLE a (x)")  # what the scheme before the runner made: running "a" again would fail
    db.execute("INSERT INTO a VALUES (1)")
    migrations = _toy("a", "b", legacy=lambda db: ["a"] if "a" in _tables(db) else [])
    assert migrations.pending(db) == ["b"]
    assert migrations.apply(db) == ["b"]
    assert db.execute("SELECT x FROM a").fetchall() == [(1,)]
    assert migrations.applied(db) == ["a", "b"]


def test_the_runner_works_in_the_callers_transaction_and_with_pythons_default_isolation(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db")  # the call log's connection: Python opens transactions itself
    assert _toy("a").apply(db) == ["a"] and not db.in_transaction
    db.execute("BEGIN IMMEDIATE")
    _toy("a", "b").apply(db)
    db.execute("ROLLBACK")  # the caller's transaction: rolled back, nothing of b stays
    assert _toy("a", "b").pending(db) == ["b"]


def test_a_name_registered_twice_is_refused():
    migrations = _toy("a")
    with pytest.raises(ValueError, match="twice"):
        migrations(migrations.steps[0][1])


def test_run_script_keeps_the_transaction_open(tmp_path):
    db = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    db.execute("BEGIN")
    run_script(db, "CREATE TABLE a (x); INSERT INTO a VALUES (1);")
    assert db.in_transaction
    db.execute("ROLLBACK")
    assert "a" not in _tables(db)


# ----------------------------------------------------------------- the memory of today's code

#: barsym.memory.memory_file at f4e35c4: MIGRATIONS[0], applied with user_version 1 and the application id
TODAYS_MEMORY_SCHEMA = """
    CREATE TABLE plans (
        id INTEGER PRIMARY KEY, task TEXT NOT NULL, planner TEXT NOT NULL, goal_item TEXT NOT NULL,
        goal_count INTEGER NOT NULL, steps TEXT NOT NULL, created REAL NOT NULL DEFAULT (julianday('now'))
    );
    CREATE TABLE decompositions (
        id INTEGER PRIMARY KEY, plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
        goal_item TEXT NOT NULL, goal_count INTEGER NOT NULL, context TEXT NOT NULL, step TEXT NOT NULL,
        subgoals TEXT NOT NULL, yields INTEGER, provenance TEXT NOT NULL, signature TEXT NOT NULL
    );
    CREATE INDEX decompositions_goal ON decompositions(goal_item, goal_count);
    CREATE INDEX decompositions_plan ON decompositions(plan_id);
    CREATE TABLE executions (
        id INTEGER PRIMARY KEY, plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
        world TEXT NOT NULL, seed INTEGER NOT NULL, runs INTEGER NOT NULL CHECK (runs >= 0),
        successes INTEGER NOT NULL CHECK (successes >= 0 AND successes <= runs)
    );
    CREATE INDEX executions_plan ON executions(plan_id);
    CREATE TABLE stale (signature TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""
MEMORY_TABLES = ("plans", "decompositions", "executions", "stale")


def _todays_memory(path, rows_from) -> None:
    """A memory as today's code writes it, holding the rows of the memory ``rows_from``."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN IMMEDIATE")
    for statement in TODAYS_MEMORY_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("PRAGMA user_version=1")
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
    db.execute("COMMIT")
    db.execute("ATTACH DATABASE ? AS source", (str(rows_from),))
    for table in MEMORY_TABLES:
        db.execute(f"INSERT INTO main.{table} SELECT * FROM source.{table}")
    db.execute("DETACH DATABASE source")
    db.close()


def _rows(path, tables=MEMORY_TABLES) -> dict[str, list]:
    with sqlite3.connect(path) as db:
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() for table in tables}


def _filled_memory(kb, path) -> None:
    store = MemoryStore(path)
    planner = with_memory(make_planner("symbolic", kb), kb, store)
    for goal in ("iron_pickaxe", "furnace"):
        result = planner.plan(Goal(item=goal, count=1))
        record(store, goal, result, planner.memory, [("stochastic", 0, 10, 9)])
    store.mark_stale("not-a-real-signature", "found wrong by a test")
    store.close()


def test_a_memory_of_todays_code_opens_read_only_then_upgrades_without_losing_a_row(kb, tmp_path):
    _filled_memory(kb, tmp_path / "source.sqlite")
    old = tmp_path / "old.sqlite"
    _todays_memory(old, tmp_path / "source.sqlite")
    rows = _rows(old)
    assert len(rows["plans"]) == 2 and len(rows["decompositions"]) > 5 and rows["stale"]

    reader = MemoryStore(old, readonly=True)  # nothing to migrate: its tables are the first migration's
    assert reader.counts()["plans"] == 2
    reader.close()

    store = MemoryStore(old)
    assert _rows(old) == rows
    with sqlite3.connect(old) as db:
        assert db.execute(f"SELECT name FROM {TABLE}").fetchall() == [("memory_001_tables",)]
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1  # what today's code reads
    planner = with_memory(make_planner("symbolic", kb), kb, store)
    warm = planner.plan(Goal(item="iron_pickaxe", count=1))
    assert warm.validation.valid and warm.stats.section(MemoryStats).hits > 0  # the old rows answer
    store.close()
    assert MemoryStore(old).counts() == MemoryStore(tmp_path / "source.sqlite").counts()  # a second open: as is


def test_a_memory_recording_a_migration_this_barsym_does_not_know_is_refused_untouched(tmp_path):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"INSERT INTO {TABLE} VALUES ('memory_999_future', 0)")
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(MemoryFileError, match="newer barsym \\(migration memory_999_future") as info:
            MemoryStore(path, readonly=readonly)
        assert "\n" not in str(info.value)
    assert path.read_bytes() == before


# ----------------------------------------------------------------- the call log of today's code

#: barsym.reasoning.call_log at f4e35c4: _SCHEMA run by executescript, then the schema version in meta
TODAYS_LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS texts (sha TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, command TEXT, planner TEXT, goal TEXT, model TEXT);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs(id), at REAL NOT NULL, goal TEXT NOT NULL,
    attempt INTEGER NOT NULL, prefix_sha TEXT, messages TEXT NOT NULL, grammar_sha TEXT, reply TEXT,
    verdict TEXT NOT NULL, problems TEXT NOT NULL, seconds REAL NOT NULL, temperature REAL NOT NULL,
    prompt_tokens INTEGER, evaluated_tokens INTEGER, completion_tokens INTEGER, evaluations INTEGER);
CREATE INDEX IF NOT EXISTS calls_run ON calls(run_id);
"""
LOG_TABLES = ("meta", "texts", "runs", "calls")


def _call(log: CallLog, goal: str) -> None:
    log.record(
        goal=goal,
        attempt=1,
        messages=[{"role": "user", "content": f"Goal: {goal}"}],
        prefix=0,
        grammar="root ::= x",
        reply="craft 4 stick: 2 planks",
        verdict="accepted",
        problems=[],
        seconds=0.5,
        temperature=0.0,
    )


def test_a_call_log_of_todays_code_reads_and_upgrades_without_losing_a_row(tmp_path):
    source = tmp_path / "source.db"
    log = CallLog(source)
    log.start_run("barsym plan stick", "bar", "4 stick", "smollm2")
    for goal in ("4 stick", "1 crafting_table"):
        _call(log, goal)
    log.close()
    old = tmp_path / "old.db"
    db = sqlite3.connect(old)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(TODAYS_LOG_SCHEMA)
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", ("1",))
    db.commit()
    db.execute("ATTACH DATABASE ? AS source", (str(source),))
    for table in ("texts", "runs", "calls"):
        db.execute(f"INSERT INTO main.{table} SELECT * FROM source.{table}")
    db.commit()
    db.close()
    rows = _rows(old, LOG_TABLES)
    assert len(rows["calls"]) == 2

    reader = CallLog(old, create=False)  # barsym logs: read-only, nothing migrated
    assert [r.goal for r in reader.recent()] == ["4 stick", "1 crafting_table"]
    reader.close()
    assert _rows(old, LOG_TABLES) == rows

    log = CallLog(old)
    assert _rows(old, LOG_TABLES) == rows
    log.start_run("barsym plan furnace", "bar", "1 furnace", "smollm2")
    _call(log, "1 furnace")
    log.close()
    with sqlite3.connect(old) as db:
        assert db.execute(f"SELECT name FROM {TABLE}").fetchall() == [("calls_001_tables",)]
    assert [r.goal for r in CallLog(old, create=False).recent()] == ["4 stick", "1 crafting_table", "1 furnace"]


def test_a_call_log_recording_a_migration_this_barsym_does_not_know_is_refused_untouched(tmp_path):
    path = tmp_path / "logs.db"
    CallLog(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"INSERT INTO {TABLE} VALUES ('calls_999_future', 0)")
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(LogError, match="newer barsym \\(migration calls_999_future"):
            CallLog(path, create=create)
    assert path.read_bytes() == before
