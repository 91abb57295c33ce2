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
import warnings
from collections import Counter
from dataclasses import dataclass

from .memory_file import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    MemoryFile,
    MemoryFileError,
    MemoryLockedError,
    default_path,
)
from .row_checks import GOOD_EXECUTION, GOOD_GOAL, Vocabulary, checked_export, decomposition_problem
from .shapes import (
    DecompositionRecord,
    RememberedDecomposition,
    ValidationError,
    as_export,
    canonical,
    first_problem,
)

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Candidate",
    "DecompositionRecord",
    "MemoryFileError",
    "MemoryLockedError",
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


class MemoryRowWarning(UserWarning):
    """A damaged row of the memory was skipped (named in the message): never shown, never used."""


#: what ``counts`` reports (``barsym memory stats``): all zero for a memory nothing has been recorded into
COUNTS = ("plans", "decompositions", "distinct_decompositions", "goals", "executions", "runs", "successes", "stale")


class MemoryStore(MemoryFile):
    """An open memory: plans, their decompositions and executions (see the module docstring).

    Every row read is checked (:mod:`.row_checks`); ``vocabulary``, set by whoever has the knowledge base
    (:func:`~barsym.memory.with_memory`, ``barsym memory``), adds the item names to the checks.
    """

    vocabulary: Vocabulary | None = None

    def skipped(self, what: str, why: str) -> None:
        """One warning per damaged row and process: the row is left out of what is shown or used."""
        key = (what, why)
        seen = self.__dict__.setdefault("_skipped", set())
        if key not in seen:
            seen.add(key)
            warnings.warn(f"memory {self.path}: {what} is damaged ({why}); skipped", MemoryRowWarning, stacklevel=3)

    def _skip_bad_executions(self) -> None:
        """Warn once about every execution row that cannot be counted (the SQL of the reads leaves them out)."""
        if self.__dict__.get("_executions_checked"):
            return
        self._executions_checked = True
        for row_id, plan_id, runs, successes in self.db.execute(
            f"SELECT id, plan_id, runs, successes FROM executions WHERE NOT ({GOOD_EXECUTION})"
        ).fetchall():
            self.skipped(
                f"execution row {row_id} (plan {plan_id})",
                f"{str(successes)[:20]} successes of {str(runs)[:20]} runs; need whole numbers, 0 <= successes <= runs",
            )

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
            self._skip_bad_executions()
            rows = self._candidate_rows(item, count)
        out = []
        for r in rows:
            record = self._record(item, count, r)
            if record is not None and r[0] not in self.stale_here:
                out.append(Candidate(r[0], record, r[6], r[7], r[8]))
        return sorted(out, key=lambda c: (-c.rate, -c.runs, c.signature))

    def _record(self, item: str, count: int, row) -> DecompositionRecord | None:
        """A stored row as a record, checked as an import is; a damaged row is one warning naming it, and None."""
        try:
            loaded = [json.loads(text) for text in row[1:4]]
            fields = RememberedDecomposition.model_validate(
                {
                    "goal_item": item,
                    "goal_count": count,
                    "context": loaded[0],
                    "step": loaded[1],
                    "subgoals": loaded[2],
                    "yields": row[4],
                    "provenance": row[5],
                }
            )
            why = decomposition_problem(fields, self.vocabulary)
        except ValidationError as exc:
            why = first_problem(exc)
        except (ValueError, TypeError, RecursionError) as exc:  # not JSON, or nested past the parser's depth
            why = "not JSON" if isinstance(exc, (ValueError, RecursionError)) else str(exc)
        if why:
            self.skipped(f"the remembered decomposition of {count} {item[:60]} (signature {str(row[0])[:60]})", why)
            return None
        return DecompositionRecord(item, count, *loaded, fields.yields, fields.provenance)

    def _candidate_rows(self, item: str, count: int) -> list:
        return self.db.execute(
            f"""SELECT d.signature, min(d.context), min(d.step), min(d.subgoals), min(d.yields), min(d.provenance),
                      coalesce(sum(e.successes), 0), coalesce(sum(e.runs), 0), count(DISTINCT d.plan_id)
               FROM (SELECT plan_id, signature, min(context) AS context, min(step) AS step,
                            min(subgoals) AS subgoals, min(yields) AS yields, min(provenance) AS provenance
                     FROM decompositions WHERE goal_item = ? AND goal_count = ?
                       AND signature NOT IN (SELECT signature FROM stale)
                     GROUP BY plan_id, signature) d
               LEFT JOIN (SELECT plan_id, sum(successes) AS successes, sum(runs) AS runs
                          FROM executions WHERE {GOOD_EXECUTION} GROUP BY plan_id) e ON e.plan_id = d.plan_id
               GROUP BY d.signature""",
            (item, count),
        ).fetchall()

    def counts(self) -> dict[str, int]:
        """Table counts from one snapshot (one statement): never a plan without its decompositions."""
        with self._reading():
            self._skip_bad_executions()
            row = self._count_row()
        out = dict(zip(COUNTS, row))
        out["stale"] += len(self.stale_here)
        return out

    def _count_row(self):
        return self.db.execute(
            f"""SELECT (SELECT count(*) FROM plans), (SELECT count(*) FROM decompositions),
                      (SELECT count(DISTINCT signature) FROM decompositions),
                      (SELECT count(*) FROM (SELECT DISTINCT goal_item, goal_count FROM decompositions)),
                      (SELECT count(*) FROM executions WHERE {GOOD_EXECUTION}),
                      (SELECT coalesce(sum(runs), 0) FROM executions WHERE {GOOD_EXECUTION}),
                      (SELECT coalesce(sum(successes), 0) FROM executions WHERE {GOOD_EXECUTION}),
                      (SELECT count(*) FROM stale)"""
        ).fetchone()

    def goals(self) -> list[tuple[str, int]]:
        """Every remembered goal; a row whose goal is not one (count ``-5`` or ``'abc'``, an unknown item) is
        skipped with one warning naming it."""
        with self._reading():
            for row_id, item, count in self.db.execute(
                f"SELECT id, goal_item, goal_count FROM decompositions WHERE NOT ({GOOD_GOAL})"
            ).fetchall():
                self.skipped(f"decomposition row {row_id}", f"goal {str(count)[:20]} {str(item)[:60]} is not a goal")
            found = self.db.execute(
                f"SELECT DISTINCT goal_item, goal_count FROM decompositions WHERE {GOOD_GOAL} "
                "ORDER BY goal_item, goal_count"
            ).fetchall()
        known = self.vocabulary
        out = []
        for item, count in found:
            problem = None if known is None else known.item_problem(item)
            if problem:
                self.skipped(f"the remembered goal {count} {item[:60]}", problem)
            else:
                out.append((item, count))
        return out

    # ---- export / import / maintenance ---------------------------------------------------
    def export_plans(self):
        """One JSON-ready dict per plan: the plan with its decompositions and executions."""
        with self._reading():
            yield from self._export_plans()

    def _export_plans(self):
        """Every plan that reads back as an export would be imported; a damaged one is one warning, skipped."""
        for pid, task, planner, item, count, steps in self.db.execute(
            "SELECT id, task, planner, goal_item, goal_count, steps FROM plans ORDER BY id"
        ).fetchall():
            try:
                plan = self._exported(pid, task, planner, item, count, steps)
                checked_export(plan, pid, self.vocabulary)
            except (ValueError, TypeError, RecursionError) as exc:
                why = "a field is not JSON" if isinstance(exc, (RecursionError, json.JSONDecodeError)) else str(exc)
                self.skipped(f"plan {pid}", why.removeprefix(f"record {pid}: "))
                continue
            yield plan

    def _exported(self, pid, task, planner, item, count, steps) -> dict:
        """One plan's rows as an exported record (not yet checked)."""
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
            [w, _read_seed(seed) if isinstance(seed, int) else seed, r, k]
            for w, seed, r, k in self.db.execute(
                "SELECT world, seed, runs, successes FROM executions WHERE plan_id=? ORDER BY id", (pid,)
            )
        ]
        return {
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

    def import_plans(self, records: list, vocabulary: Vocabulary | None = None, lines: list[int] | None = None) -> int:
        """Store exported plans all or none (one transaction); ValueError naming the first bad record.

        ``vocabulary`` (the knowledge base's names) refuses unknown items, worlds and layers too;
        ``lines`` are the records' line numbers in the file, for the message.

        Idempotent: a plan already in the memory (equal in every field, executions
        included) is not added again, so importing one export twice counts its
        runs once. Plans that occur twice in the export occur twice after it: the
        comparison counts copies. Returns how many plans were added.
        """
        parsed = []
        for number, record in enumerate(records, start=1):
            try:  # the shape, then the sense: known items and worlds, real steps, counts in range
                parsed.append(checked_export(record, number, vocabulary))
            except ValueError as exc:
                where = f"line {lines[number - 1]}, " if lines else ""
                raise ValueError(f"{where}{exc}") from None
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
