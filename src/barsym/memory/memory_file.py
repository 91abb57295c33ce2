"""The memory's SQLite file: refused unless it is a barsym memory, migrated, written in transactions.

Why the checks before any write: a memory path is user input. A file that is
not a barsym memory (another SQLite database, a text file), a corrupt one or
one written by a newer barsym is refused with one line (:class:`MemoryFileError`)
and never touched: the identity (``application_id``), the schema version
(``user_version``) and the migrations recorded (:mod:`barsym.sqlite_migrations`)
are read before anything is created or migrated. What is
stored, and how it is read, is :class:`~barsym.memory.store.MemoryStore`'s.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ..private_files import create_private, untrusted_side_file
from ..sqlite_migrations import Migrations, run_script

#: "BSYM": marks a SQLite file as a barsym memory
APPLICATION_ID = 0x4253594D


def _legacy(db: sqlite3.Connection) -> list[str]:
    """A memory written before the migration runner: ``user_version`` 1 is its tables (schema 1, the only one)."""
    return ["memory_001_tables"] if db.execute("PRAGMA user_version").fetchone()[0] >= 1 else []


#: the memory's schema, one named migration at a time (:mod:`barsym.sqlite_migrations`)
MIGRATIONS = Migrations(legacy=_legacy)


@MIGRATIONS
def memory_001_tables(db: sqlite3.Connection) -> None:
    """Plans, their decompositions and executions, and the decompositions found stale."""
    run_script(
        db,
        """
        CREATE TABLE plans (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL,
            planner TEXT NOT NULL,
            goal_item TEXT NOT NULL,
            goal_count INTEGER NOT NULL,
            steps TEXT NOT NULL,
            created REAL NOT NULL DEFAULT (julianday('now'))
        );
        CREATE TABLE decompositions (
            id INTEGER PRIMARY KEY,
            plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
            goal_item TEXT NOT NULL,
            goal_count INTEGER NOT NULL,
            context TEXT NOT NULL,
            step TEXT NOT NULL,
            subgoals TEXT NOT NULL,
            yields INTEGER,
            provenance TEXT NOT NULL,
            signature TEXT NOT NULL
        );
        CREATE INDEX decompositions_goal ON decompositions(goal_item, goal_count);
        CREATE INDEX decompositions_plan ON decompositions(plan_id);
        CREATE TABLE executions (
            id INTEGER PRIMARY KEY,
            plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
            world TEXT NOT NULL,
            seed INTEGER NOT NULL,
            runs INTEGER NOT NULL CHECK (runs >= 0),
            successes INTEGER NOT NULL CHECK (successes >= 0 AND successes <= runs)
        );
        CREATE INDEX executions_plan ON executions(plan_id);
        CREATE TABLE stale (
            signature TEXT PRIMARY KEY,
            reason TEXT NOT NULL
        );
        """,
    )
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")


#: how many migrations this barsym knows: a file whose ``user_version`` is higher was written by a newer one
SCHEMA_VERSION = len(MIGRATIONS.names)


def _why_unwritable(path: Path, exc: sqlite3.Error, timeout: float) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return (
            f"memory {path}: locked by another writer (waited {timeout:g} s); try again when it has "
            "finished, or record into another --memory file"
        )
    if "full" in text:
        return f"memory {path}: the disk is full ({text}); free some space and run again"
    if "readonly" in text:
        return f"memory {path}: cannot write the file or its folder ({text})"
    return f"memory {path}: cannot write ({' '.join(text.split())[:200]})"


class MemoryFileError(Exception):
    """The memory file cannot be used; the message is one line for the user."""


class MemoryLockedError(MemoryFileError):
    """Another process holds the memory's lock past the busy timeout: the work can go on without the memory."""


def _unusable(path: Path, exc: sqlite3.Error, timeout: float) -> MemoryFileError:
    """The one-line error for a failed write or lock; a lock held by another process is a MemoryLockedError."""
    text = str(exc)
    locked = "locked" in text or "busy" in text
    return (MemoryLockedError if locked else MemoryFileError)(_why_unwritable(path, exc, timeout))


def default_path() -> Path:
    """``$BARSYM_MEMORY``, else ``memory.sqlite`` in the user data directory (XDG)."""
    if os.environ.get("BARSYM_MEMORY"):
        return Path(os.environ["BARSYM_MEMORY"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "barsym" / "memory.sqlite"


def _first_damage(rows: list) -> str:
    """The first damage ``quick_check`` lists, or "ok"; a row edited past a CHECK constraint is not damage
    to the file (the reads skip it, with a warning naming it: :mod:`.row_checks`)."""
    found = [str(row[0]) for row in rows if not str(row[0]).startswith("CHECK constraint failed")]
    return found[0] if found else "ok"


class MemoryFile:
    """An open memory file, checked and migrated. ``readonly`` opens without creating or migrating anything."""

    def __init__(self, path: Path | str, readonly: bool = False, timeout: float = 10.0):
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = timeout
        self.stale_here: dict[str, str] = {}  # stale marks a read-only store could not write (this process only)
        if self.path.is_dir():
            raise MemoryFileError(f"memory {self.path}: is a folder; give the name of a file")
        if readonly and not self.path.exists():
            raise MemoryFileError(f"memory {self.path}: no such file")
        if not readonly and not self.path.parent.is_dir():
            what = "is not a folder" if self.path.parent.exists() else "does not exist"
            raise MemoryFileError(f"memory {self.path}: folder {self.path.parent} {what}")
        if self.path.exists() and not os.access(self.path, os.R_OK):
            raise MemoryFileError(f"memory {self.path}: cannot read the file (permission denied)")
        if not readonly and self.path.exists() and not os.access(self.path, os.W_OK):
            raise MemoryFileError(f"memory {self.path}: read-only file; recording needs to write it")
        if not readonly and not self.path.exists():
            try:  # 0600 before SQLite writes into it (its -wal and -shm files then get the same mode)
                create_private(self.path)
            except OSError as exc:
                raise MemoryFileError(f"memory {self.path}: cannot create the file ({exc.strerror or exc})") from None
        side = untrusted_side_file(self.path)  # a -wal others can write plants rows in a file they cannot
        if side is not None:
            raise MemoryFileError(f"memory {self.path}: {side}; delete it (with no barsym running) or fix its mode")
        try:
            uri = f"file:{self.path}?mode={'ro' if readonly else 'rwc'}"
            self.db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise MemoryFileError(f"memory {self.path}: cannot open ({exc})") from None
        try:
            self._check(readonly)
        except BaseException:
            self.db.close()
            raise

    def _check(self, readonly: bool) -> None:
        try:
            app = self.db.execute("PRAGMA application_id").fetchone()[0]
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            unknown = MIGRATIONS.unknown(self.db) if app == APPLICATION_ID else []
            pending = MIGRATIONS.pending(self.db)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):  # an exclusive lock held before this command started
                raise _unusable(self.path, exc, self.timeout) from None
            raise MemoryFileError(f"memory {self.path}: not a barsym memory or corrupt ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise MemoryFileError(f"memory {self.path}: not a barsym memory or corrupt ({exc})") from None
        if app != APPLICATION_ID and (tables or version):
            raise MemoryFileError(
                f"memory {self.path}: is an SQLite file but not a barsym memory; refusing to change it"
            )
        if version > SCHEMA_VERSION or unknown:
            what = f"migration {unknown[0]}" if unknown else f"schema {version}"
            raise MemoryFileError(
                f"memory {self.path}: written by a newer barsym ({what}, this one "
                f"reads up to {MIGRATIONS.names[-1]}); upgrade barsym"
            )
        if readonly:
            if version == 0 and not tables:  # an empty file: nothing recorded into it yet
                raise MemoryFileError(
                    f"memory {self.path}: is empty (nothing recorded yet); record into it with --record "
                    "(or memory build/import), or give another --memory file"
                )
            if pending:
                raise MemoryFileError(
                    f"memory {self.path}: needs migrating ({', '.join(pending)}); open it for writing"
                )
            try:  # a read-only reader checks too: a damaged page would otherwise surface mid-plan
                problem = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
            except sqlite3.DatabaseError as exc:
                raise MemoryFileError(f"memory {self.path}: corrupt ({' '.join(str(exc).split())})") from None
            if problem != "ok":
                raise MemoryFileError(f"memory {self.path}: corrupt ({' '.join(str(problem).split())[:200]})")
            return
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            MIGRATIONS.apply(self.db)  # under the write lock; an up-to-date file gets a write probe
            problem = _first_damage(self.db.execute("PRAGMA quick_check").fetchall())
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):  # write-protected beyond what os.access sees (immutable file, read-only disk)
                raise MemoryFileError(
                    f"memory {self.path}: cannot write the file or its folder ({exc}); recording needs to write it"
                ) from None
            if any(word in str(exc) for word in ("locked", "busy", "full")):
                raise _unusable(self.path, exc, self.timeout) from None
            raise MemoryFileError(f"memory {self.path}: corrupt or unwritable ({' '.join(str(exc).split())})") from None
        except sqlite3.DatabaseError as exc:
            raise MemoryFileError(f"memory {self.path}: corrupt or unwritable ({' '.join(str(exc).split())})") from None
        if problem != "ok":  # quick_check lists every damaged page, one per row: the first is enough
            raise MemoryFileError(f"memory {self.path}: corrupt ({' '.join(str(problem).split())[:200]})")

    def _rollback(self) -> None:
        """Roll back if a transaction is still open: SQLite ends one itself on a full disk or I/O error."""
        if self.db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")

    @contextlib.contextmanager
    def _transaction(self):
        """One write transaction; a lock held too long, a full disk or a damaged file is one MemoryFileError line."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise _unusable(self.path, exc, self.timeout) from None

    @contextlib.contextmanager
    def _reading(self):
        """A read; a page found damaged only now is one MemoryFileError line, not a traceback mid-plan."""
        try:
            yield
        except sqlite3.Error as exc:
            raise MemoryFileError(
                f"memory {self.path}: cannot read ({' '.join(str(exc).split())[:200]}); the file may be corrupt"
            ) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "MemoryFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
