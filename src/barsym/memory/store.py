"""BAR's stage memory: goal decompositions and the execution success of the plans that used them.

Why SQLite: several evaluations may record into one memory at the same time
(8 processes in the tests), a killed process must leave a consistent file, and
readers must never see half a plan. One transaction per plan (``BEGIN
IMMEDIATE``) with WAL journaling gives all three without a server.

Why the checks before any write: a memory path is user input. A file that is
not a barsym memory (another SQLite database, a text file), a corrupt one or
one written by a newer barsym is refused with one line (:class:`MemoryFileError`)
and never touched: the identity (``application_id``) and the schema version
(``user_version``) are read before anything is created or migrated.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..private_files import create_private
from .records import (
    DecompositionRecord,
    RememberedDecomposition,
    ValidationError,
    as_export,
    canonical,
    first_problem,
    parsed_export,
)

#: "BSYM": marks a SQLite file as a barsym memory
APPLICATION_ID = 0x4253594D
SCHEMA_VERSION = 1
#: migrations[v] takes a database at version v to v + 1
MIGRATIONS: list[str] = [
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
]


def _stored_seed(seed: int) -> int:
    """A world seed (up to 64 bits unsigned) as SQLite's signed 64-bit INTEGER: two's complement."""
    seed = int(seed) & (2**64 - 1)
    return seed - 2**64 if seed >= 2**63 else seed


def _read_seed(stored: int) -> int:
    return stored + 2**64 if stored < 0 else stored


def _execution_rows(plan_id: int, executions) -> list[tuple]:
    return [(plan_id, world, _stored_seed(seed), runs, successes) for world, seed, runs, successes in executions]


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


def default_path() -> Path:
    """``$BARSYM_MEMORY``, else ``memory.sqlite`` in the user data directory (XDG)."""
    if os.environ.get("BARSYM_MEMORY"):
        return Path(os.environ["BARSYM_MEMORY"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "barsym" / "memory.sqlite"


@dataclass(frozen=True)
class Candidate:
    """One remembered decomposition of a goal (the record as written), with the executions of every plan that used it.

    ``signature`` is the one stored with the rows (the record's own, when it was written).
    """

    signature: str
    record: DecompositionRecord
    successes: int
    runs: int
    plans: int

    @property
    def rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0


class MemoryStore:
    """An open memory file. ``readonly`` opens without creating or migrating anything."""

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
        except sqlite3.DatabaseError as exc:
            raise MemoryFileError(f"memory {self.path}: not a barsym memory or corrupt ({exc})") from None
        if app != APPLICATION_ID and (tables or version):
            raise MemoryFileError(
                f"memory {self.path}: is an SQLite file but not a barsym memory; refusing to change it"
            )
        if version > SCHEMA_VERSION:
            raise MemoryFileError(
                f"memory {self.path}: written by a newer barsym (schema {version}, this one "
                f"reads up to {SCHEMA_VERSION}); upgrade barsym"
            )
        if readonly:
            if version < SCHEMA_VERSION:
                raise MemoryFileError(f"memory {self.path}: schema {version} needs migrating; open it for writing")
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
            self._migrate()
            problem = self.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):  # write-protected beyond what os.access sees (immutable file, read-only disk)
                raise MemoryFileError(
                    f"memory {self.path}: cannot write the file or its folder ({exc}); recording needs to write it"
                ) from None
            if any(word in str(exc) for word in ("locked", "busy", "full")):
                raise MemoryFileError(_why_unwritable(self.path, exc, self.timeout)) from None
            raise MemoryFileError(f"memory {self.path}: corrupt or unwritable ({' '.join(str(exc).split())})") from None
        except sqlite3.DatabaseError as exc:
            raise MemoryFileError(f"memory {self.path}: corrupt or unwritable ({' '.join(str(exc).split())})") from None
        if problem != "ok":  # quick_check lists every damaged page, one per row: the first is enough
            raise MemoryFileError(f"memory {self.path}: corrupt ({' '.join(str(problem).split())[:200]})")

    def _migrate(self) -> None:
        """Bring the schema up to date under the write lock; an up-to-date file gets a write probe, rolled back.

        SQLite opens a write-protected file read-only without a word, so without
        the probe the first recorded plan would be the first to find out.
        """
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]  # re-read under the lock
            if version == SCHEMA_VERSION:
                self.db.execute(f"PRAGMA user_version={version}")  # the probe: fails on a read-only file
                self.db.execute("ROLLBACK")
                return
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version={step + 1}")
            if version < SCHEMA_VERSION:
                self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

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
            raise MemoryFileError(_why_unwritable(self.path, exc, self.timeout)) from None

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

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing: one transaction per plan ----------------------------------------------
    def record_plan(
        self,
        task: str,
        planner: str,
        goal: tuple[str, int],
        steps: list[str],
        decompositions: list[DecompositionRecord],
        executions: list[tuple[str, int, int, int]] = (),
    ) -> int:
        """Store one plan, its decompositions and its executions (world, seed, runs, successes) atomically."""
        with self._transaction():
            plan_id = self._insert_plan(task, planner, goal, steps, decompositions, executions)
        return plan_id

    def _insert_plan(self, task, planner, goal, steps, decompositions, executions) -> int:
        """The rows of one plan, inside the caller's transaction."""
        plan_id = self.db.execute(
            "INSERT INTO plans(task, planner, goal_item, goal_count, steps) VALUES (?,?,?,?,?)",
            (task, planner, goal[0], goal[1], json.dumps(steps)),
        ).lastrowid
        self.db.executemany(
            "INSERT INTO decompositions(plan_id, goal_item, goal_count, context, step, subgoals, yields,"
            " provenance, signature) VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (
                    plan_id,
                    d.goal_item,
                    d.goal_count,
                    json.dumps(d.context, sort_keys=True),
                    json.dumps(d.step),
                    json.dumps(d.subgoals),
                    d.yields,
                    d.provenance,
                    d.signature,
                )
                for d in decompositions
            ],
        )
        self.db.executemany(
            "INSERT INTO executions(plan_id, world, seed, runs, successes) VALUES (?,?,?,?,?)",
            _execution_rows(plan_id, executions),
        )
        return plan_id

    def attach_executions(self, plan_id: int, executions: list[tuple[str, int, int, int]]) -> None:
        """Add executions (world, seed, runs, successes) to a recorded plan, in one transaction."""
        with self._transaction():
            self.db.executemany(
                "INSERT INTO executions(plan_id, world, seed, runs, successes) VALUES (?,?,?,?,?)",
                _execution_rows(plan_id, executions),
            )

    def plan_with_steps(self, steps: list[str]) -> int | None:
        """The latest recorded plan with exactly these steps (what ``execute --record`` credits), or None."""
        with self._reading():
            row = self.db.execute(
                "SELECT id FROM plans WHERE steps = ? ORDER BY id DESC LIMIT 1", (json.dumps(steps),)
            ).fetchone()
        return row[0] if row else None

    def mark_stale(self, signature: str, reason: str) -> None:
        """Never use this decomposition again; a read-only store keeps the mark for this process only."""
        if self.readonly:
            self.stale_here[signature] = reason
            return
        try:
            self.db.execute("INSERT OR REPLACE INTO stale(signature, reason) VALUES (?, ?)", (signature, reason))
        except sqlite3.Error:  # locked or full: the mark holds for this process, the answer is refused all the same
            self.stale_here[signature] = reason

    # ---- reading -------------------------------------------------------------------------
    def candidates(self, item: str, count: int) -> list[Candidate]:
        """Every non-stale decomposition of this goal, pooled by signature, best success rate first."""
        with self._reading():
            rows = self._candidate_rows(item, count)
        out = [
            Candidate(r[0], self._record(item, count, r), r[6], r[7], r[8]) for r in rows if r[0] not in self.stale_here
        ]
        return sorted(out, key=lambda c: (-c.rate, -c.runs, c.signature))

    def _record(self, item: str, count: int, row) -> DecompositionRecord:
        """A stored row as a record, checked with the import's model; a damaged row is one line naming it."""
        try:
            fields = RememberedDecomposition.model_validate(
                {
                    "goal_item": item,
                    "goal_count": count,
                    "context": json.loads(row[1]),
                    "step": json.loads(row[2]),
                    "subgoals": json.loads(row[3]),
                    "yields": row[4],
                    "provenance": row[5],
                }
            )
        except (ValidationError, ValueError, TypeError) as exc:
            why = first_problem(exc) if isinstance(exc, ValidationError) else str(exc)
            raise MemoryFileError(
                f"memory {self.path}: the remembered decomposition of {count} {item} "
                f"(signature {row[0][:60]}) is damaged ({why}); export, fix and re-import, "
                "or clear the memory"
            ) from None
        return DecompositionRecord(
            item, count, json.loads(row[1]), json.loads(row[2]), json.loads(row[3]), fields.yields, fields.provenance
        )

    def _candidate_rows(self, item: str, count: int) -> list:
        return self.db.execute(
            """SELECT d.signature, min(d.context), min(d.step), min(d.subgoals), min(d.yields), min(d.provenance),
                      coalesce(sum(e.successes), 0), coalesce(sum(e.runs), 0), count(DISTINCT d.plan_id)
               FROM (SELECT plan_id, signature, min(context) AS context, min(step) AS step,
                            min(subgoals) AS subgoals, min(yields) AS yields, min(provenance) AS provenance
                     FROM decompositions WHERE goal_item = ? AND goal_count = ?
                       AND signature NOT IN (SELECT signature FROM stale)
                     GROUP BY plan_id, signature) d
               LEFT JOIN (SELECT plan_id, sum(successes) AS successes, sum(runs) AS runs
                          FROM executions GROUP BY plan_id) e ON e.plan_id = d.plan_id
               GROUP BY d.signature""",
            (item, count),
        ).fetchall()

    def counts(self) -> dict[str, int]:
        """Table counts from one snapshot (one statement): never a plan without its decompositions."""
        names = (
            "plans",
            "decompositions",
            "distinct_decompositions",
            "goals",
            "executions",
            "runs",
            "successes",
            "stale",
        )
        with self._reading():
            row = self._count_row()
        out = dict(zip(names, row))
        out["stale"] += len(self.stale_here)
        return out

    def _count_row(self):
        return self.db.execute(
            """SELECT (SELECT count(*) FROM plans), (SELECT count(*) FROM decompositions),
                      (SELECT count(DISTINCT signature) FROM decompositions),
                      (SELECT count(*) FROM (SELECT DISTINCT goal_item, goal_count FROM decompositions)),
                      (SELECT count(*) FROM executions), (SELECT coalesce(sum(runs), 0) FROM executions),
                      (SELECT coalesce(sum(successes), 0) FROM executions), (SELECT count(*) FROM stale)"""
        ).fetchone()

    def goals(self) -> list[tuple[str, int]]:
        with self._reading():
            return [
                tuple(r)
                for r in self.db.execute(
                    "SELECT DISTINCT goal_item, goal_count FROM decompositions ORDER BY goal_item, goal_count"
                )
            ]

    # ---- export / import / maintenance ---------------------------------------------------
    def export_plans(self):
        """One JSON-ready dict per plan: the plan with its decompositions and executions."""
        with self._reading():
            yield from self._export_plans()

    def _export_plans(self):
        for pid, task, planner, item, count, steps in self.db.execute(
            "SELECT id, task, planner, goal_item, goal_count, steps FROM plans ORDER BY id"
        ).fetchall():
            decs = [
                {
                    "goal_item": r[0],
                    "goal_count": r[1],
                    "context": json.loads(r[2]),
                    "step": json.loads(r[3]),
                    "subgoals": json.loads(r[4]),
                    "yields": r[5],
                    "provenance": r[6],
                }
                for r in self.db.execute(
                    "SELECT goal_item, goal_count, context, step, subgoals, yields,"
                    " provenance FROM decompositions WHERE plan_id=? ORDER BY id",
                    (pid,),
                )
            ]
            exes = [
                [w, _read_seed(seed), r, k]
                for w, seed, r, k in self.db.execute(
                    "SELECT world, seed, runs, successes FROM executions WHERE plan_id=? ORDER BY id", (pid,)
                )
            ]
            yield {
                "task": task,
                "planner": planner,
                "goal": [item, count],
                "steps": json.loads(steps),
                "decompositions": decs,
                "executions": exes,
            }

    def import_plan(self, record: dict) -> int:
        """Store one exported plan; ValueError (with what is wrong) for a record of another shape."""
        return self.import_plans([record])

    def import_plans(self, records: list) -> int:
        """Store exported plans all or none (one transaction); ValueError naming the first bad record.

        Idempotent: a plan already in the memory (equal in every field, executions
        included) is not added again, so importing one export twice counts its
        runs once. Plans that occur twice in the export occur twice after it: the
        comparison counts copies. Returns how many plans were added.
        """
        parsed = [parsed_export(record, number) for number, record in enumerate(records, start=1)]
        added = 0
        with self._transaction():
            present = Counter(canonical(plan) for plan in self._export_plans())
            for number, plan in enumerate(parsed, start=1):
                text = canonical(as_export(*plan))
                if present[text] > 0:
                    present[text] -= 1
                    continue
                try:
                    self._insert_plan(*plan)
                except sqlite3.IntegrityError as exc:
                    raise ValueError(f"record {number} breaks the memory's constraints ({exc})") from None
                added += 1
        return added

    def prune(self, min_rate: float, min_runs: int) -> int:
        """Delete plans whose executions total at least ``min_runs`` runs at a rate below ``min_rate``."""
        with self._transaction():
            cur = self.db.execute(
                """DELETE FROM plans WHERE id IN (
                     SELECT plan_id FROM executions GROUP BY plan_id
                     HAVING sum(runs) >= ? AND sum(successes) < ? * sum(runs))""",
                (min_runs, min_rate),
            )
        return cur.rowcount

    def clear(self) -> None:
        with self._transaction():
            for table in ("executions", "decompositions", "plans", "stale"):
                self.db.execute(f"DELETE FROM {table}")
