"""One migration runner for barsym's SQLite files: named migrations, each applied once, its name recorded.

barsym keeps two SQLite files, the stage memory (:mod:`barsym.memory.memory_file`) and the model call log
(:mod:`barsym.reasoning.calls.call_log`). Each used to carry its own scheme -- a ``user_version`` counter and a
list of scripts for one, a ``meta`` row and ``CREATE ... IF NOT EXISTS`` for the other. Both now declare
a :class:`Migrations` list: functions that take the connection, in the order they were written, each run
once and recorded by name in the file's ``_migrations`` table (the way simonw/llm upgrades its log
database). A new column is one more function at the end of the list; nothing is ever renamed or removed.

Files written before this runner have no ``_migrations`` table; each list's ``legacy`` function names the
migrations such a file already holds (read from the marker the old scheme left), so they are recorded, not
run again, and nothing in the file is touched but the new table. A file that records a name this barsym
does not know was written by a newer barsym and is refused by the store (:meth:`Migrations.unknown`).
``PRAGMA user_version`` is kept equal to the number of migrations applied, so a barsym from before this
runner, which reads that number (the memory) or refuses what it does not know, refuses a newer file too.

This module imports nothing of barsym: both stores, in different layers, use it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

TABLE = "_migrations"
Migration = Callable[[sqlite3.Connection], None]


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated statements one by one (``executescript`` would commit the open transaction first)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


class Migrations:
    """The named migrations of one kind of file, in order; register one with ``@migrations``.

    ``legacy(db)`` names the migrations a file without a ``_migrations`` table already holds (those the
    scheme before this runner applied); it is called only on such a file.
    """

    def __init__(self, legacy: Callable[[sqlite3.Connection], list[str]] | None = None):
        self.steps: list[tuple[str, Migration]] = []
        self.legacy = legacy or (lambda db: [])

    def __call__(self, function: Migration) -> Migration:
        if function.__name__ in self.names:
            raise ValueError(f"migration {function.__name__} is registered twice")
        self.steps.append((function.__name__, function))
        return function

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.steps]

    def applied(self, db: sqlite3.Connection) -> list[str]:
        """The names the file records, in the order they were applied (the legacy ones for an older file)."""
        found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone()
        if found is None:
            return list(self.legacy(db))
        return [name for (name,) in db.execute(f"SELECT name FROM {TABLE} ORDER BY rowid")]

    def pending(self, db: sqlite3.Connection) -> list[str]:
        """The migrations this file still needs, in order."""
        done = set(self.applied(db))
        return [name for name in self.names if name not in done]

    def unknown(self, db: sqlite3.Connection) -> list[str]:
        """Recorded names this barsym does not know: the file was written by a newer one."""
        known = set(self.names)
        return [name for name in self.applied(db) if name not in known]

    def apply(self, db: sqlite3.Connection) -> list[str]:
        """Record the legacy migrations of an older file, then run each pending one; returns the names run.

        In the caller's transaction if one is open (the caller commits or rolls back), else in one
        ``BEGIN IMMEDIATE`` of its own: two processes opening a new file at once migrate it once, and a
        migration that fails leaves the file as it was. An up-to-date file still gets one write, rolled
        back: SQLite opens a write-protected file read-only without a word, and without this probe the
        first record written would be the first to find out.
        """
        own = not db.in_transaction
        if own:
            db.execute("BEGIN IMMEDIATE")
        try:
            ran, changed = self._apply(db)
            if own:
                db.execute("COMMIT" if changed else "ROLLBACK")
        except BaseException:
            if own and db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return ran

    def _apply(self, db: sqlite3.Connection) -> tuple[list[str], bool]:
        done = self.applied(db)  # read under the write lock: another process may have just migrated
        had_table = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is not None
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
        if not had_table:  # an older file's: held already, recorded now
            db.executemany(f"INSERT INTO {TABLE} VALUES (?, ?)", [(name, time.time()) for name in done])
        ran = []
        for name, function in self.steps:
            if name not in done:
                function(db)
                db.execute(f"INSERT INTO {TABLE} VALUES (?, ?)", (name, time.time()))
                ran.append(name)
        db.execute(f"PRAGMA user_version={len(done) + len(ran)}")  # the probe, when nothing else is written
        return ran, bool(ran) or not had_table
