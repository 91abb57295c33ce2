"""BAR's stage memory: goal decompositions and the execution success of the plans that used them.

Why SQLite: several evaluations may record into one memory at the same time
(8 processes in the tests), a killed process must leave a consistent file, and
readers must never see half a plan. One transaction per plan (``BEGIN
IMMEDIATE``) with WAL journaling gives all three without a server.

The file itself -- refused unless it is a barsym memory, migrated, written in
transactions -- is :class:`~barsym.memory.memory_file.MemoryFile`'s; this class
adds what is stored and how it is read.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass

from .memory_file import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, MemoryFile, MemoryFileError, default_path
from .records import (
    DecompositionRecord,
    RememberedDecomposition,
    ValidationError,
    as_export,
    canonical,
    first_problem,
    parsed_export,
)

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Candidate",
    "DecompositionRecord",
    "MemoryFileError",
    "MemoryStore",
    "default_path",
]


def _stored_seed(seed: int) -> int:
    """A world seed (up to 64 bits unsigned) as SQLite's signed 64-bit INTEGER: two's complement."""
    seed = int(seed) & (2**64 - 1)
    return seed - 2**64 if seed >= 2**63 else seed


def _read_seed(stored: int) -> int:
    return stored + 2**64 if stored < 0 else stored


def _execution_rows(plan_id: int, executions) -> list[tuple]:
    return [(plan_id, world, _stored_seed(seed), runs, successes) for world, seed, runs, successes in executions]


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


#: what ``counts`` reports (``barsym memory stats``): all zero for a memory nothing has been recorded into
COUNTS = ("plans", "decompositions", "distinct_decompositions", "goals", "executions", "runs", "successes", "stale")


class MemoryStore(MemoryFile):
    """An open memory: plans, their decompositions and executions (see the module docstring)."""

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
        with self._reading():
            row = self._count_row()
        out = dict(zip(COUNTS, row))
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
