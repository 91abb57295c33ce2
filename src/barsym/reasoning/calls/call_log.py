"""Every model call, kept in a SQLite file: prompt, grammar, reply, verdict, time.

When a plan looks odd the question is always "what did the model see, what
did it say, and why was that refused?". The counters in ``PlanResult.stats``
cannot answer it; this log can, and ``barsym logs`` shows it (like simonw/llm's
``llm logs``). One row per call, written when the verifier's verdict is known.

Storage: stdlib ``sqlite3`` in WAL mode (a reader never blocks the planner),
one commit per call (an interrupted plan keeps what it did). The schema is a
list of named migrations, each recorded in the file when applied
(:mod:`barsym.sqlite_migrations`, as for the memory); a file written by a newer
barsym is refused rather than misread. Texts that repeat -- the few-shot prefix of every prompt, grammars --
are stored once in ``texts``, keyed by SHA-256, so a 53-task evaluation adds
about a megabyte, not a hundred. The file is ``$BARSYM_LOG_DB``, else
``logs.db`` in the cache folder; ``BARSYM_LOG_DB=off`` turns logging off. A
log that cannot be written (read-only disk, locked) is switched off with one
warning: logging never stops a plan, and neither does a damaged log (bad
schema version, bad rows): that too is one warning naming the file.

What it keeps is private: the file is created 0600 (its folder 0700 when
barsym makes it, :mod:`barsym.private_files`), secrets are taken out of every
text before it is written (:func:`barsym.redact.redact`: ``--api-key`` values,
bearer tokens, passwords in URLs), and a log path that is a symbolic link, or
a file of another user or one others can write, is not written to: a link to
another SQLite file would otherwise get barsym's tables written into it.
Reading (``barsym logs``) opens the file read-only, so a log on a read-only
mount can still be shown; a damaged row is skipped and named, the rest shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import warnings
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...kb import cache_dir
from ...private_files import create_private, private_dir, untrusted, untrusted_side_file
from ...redact import redact
from ...sqlite_migrations import Migrations, run_script
from .call_records import CallRecord, damaged_summary, record_from_row

__all__ = [
    "CallLog",
    "CallRecord",
    "LogError",
    "Verdict",
    "damaged_summary",
    "default_log_path",
    "command_line",
    "open_log",
    "set_command",
]

SCHEMA_VERSION = 1
ENV_VAR = "BARSYM_LOG_DB"
OFF = ("off", "none", "0", "false", "no")


def _legacy(db: sqlite3.Connection) -> list[str]:
    """A log written before the migration runner: its ``meta`` table is its tables (schema 1, the only one)."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    return ["calls_001_tables"] if found else []


#: the log's schema, one named migration at a time (:mod:`barsym.sqlite_migrations`); ``meta``'s
#: ``schema_version`` stays, for the barsyms from before the runner, which refuse a number above theirs
MIGRATIONS = Migrations(legacy=_legacy)


@MIGRATIONS
def calls_001_tables(db: sqlite3.Connection) -> None:
    """Runs, their calls, and the texts the calls share (stored once, by SHA-256)."""
    run_script(
        db,
        """
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
        """,
    )
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


class LogError(Exception):
    """The log file cannot be read (not SQLite, or written by a newer barsym)."""


class Verdict(str, Enum):
    """What became of a reply."""

    ACCEPTED = "accepted"  # the verifier accepted it (or, for llm-only, it was a readable step)
    REFUSED = "refused"  # the verifier named problems
    UNREADABLE = "unreadable"  # not a step at all
    REPEATED = "repeated"  # a greedy retry repeated a refused answer: the goal went to the fallback
    BACKEND_ERROR = "backend-error"  # no reply


class LogQuery(BaseModel):
    """What ``barsym logs`` shows: how many of the last calls, of which run or command, and whether whole (its
    options are made from this). Every process that asks a model writes into one log, so without a filter the
    calls of an evaluation in one terminal and a plan in another come interleaved."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(
        10,
        ge=0,
        le=1_000_000,
        description="how many calls, newest last (0 for all)",
        json_schema_extra={"short": ("-n",), "metavar": "N"},
    )
    full: bool = Field(False, description="the whole prompt and grammar, not only the goal's message")
    run_number: int | None = Field(  # not "run": the parser's own name for the command's function
        None,
        ge=1,
        le=2**62,
        description="only the calls of run N (each call shows its run: 'run 12: barsym plan ...')",
        json_schema_extra={"metavar": "N", "flag": "--run"},
    )
    command_text: str | None = Field(  # not "command": the parser's own name for the sub-command
        None,
        min_length=1,
        max_length=1000,
        description="only the calls of runs whose command line contains TEXT, e.g. 'barsym eval' or 'diamond'",
        json_schema_extra={"metavar": "TEXT", "flag": "--command"},
    )


#: the command line of this process, for the runs the short calls (score, repair, parse) start (:func:`set_command`)
_command: str | None = None


def command_line() -> str | None:
    """What :func:`set_command` was told (None: nothing)."""
    return _command


def set_command(command: str) -> None:
    """What the runs this process starts without a planner are called (``barsym parse plan.txt``): a command that
    asks the model outside a plan says so once, and its calls are then in a run that ``barsym logs --run`` and
    ``--command`` find, with the model that answered."""
    global _command
    _command = command


def default_log_path() -> Path | None:
    """``$BARSYM_LOG_DB``, else ``logs.db`` in barsym's cache folder; None when logging is off."""
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured.lower() in OFF:
        return None
    return Path(configured) if configured else cache_dir() / "logs.db"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CallLog:
    """An open log; :meth:`start_run` once per plan, :meth:`record` once per call.

    ``create`` False opens an existing file read-only (``barsym logs``); True
    creates it (0600) and its tables if need be, for writing.
    """

    def __init__(self, path: Path, *, create: bool = True):
        self.path = Path(path)
        if not create and (not self.path.is_file() or self.path.stat().st_size == 0):
            raise FileNotFoundError(str(self.path))  # missing, or empty: nothing logged yet
        if create:
            self._prepare()
        elif untrusted_side_file(self.path) is not None:  # what it would show could be planted there
            raise LogError(f"not reading the call log {self.path}: {untrusted_side_file(self.path)}; delete it")
        try:
            self.db = self._connect(create)
            version = self._version(create)
        except LogError:
            self._close_quietly()
            raise
        except sqlite3.OperationalError as exc:
            self._close_quietly()
            raise LogError(f"cannot open the call log {self.path} ({exc})") from None
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise LogError(f"{self.path} is not a barsym call log ({exc})") from None
        if version > SCHEMA_VERSION:
            self.db.close()
            raise LogError(
                f"{self.path} has schema version {version}; this barsym reads up to "
                f"{SCHEMA_VERSION} (upgrade barsym, or point {ENV_VAR} elsewhere)"
            )
        self.run: int | None = None

    def _prepare(self) -> None:
        """The folder (0700 if made here) and an empty 0600 file, never through a link or into another's file."""
        problem = untrusted(self.path)
        if problem is not None:
            raise LogError(
                f"the call log {self.path} {problem}; barsym writes its log only into a file of "
                f"its own (point {ENV_VAR} at another path, or set it to off)"
            )
        private_dir(self.path.parent)
        if not create_private(self.path):  # a log of an older barsym may be world-readable: it holds prompts
            for part in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
                if part.exists() and not part.is_symlink() and untrusted(part) is None and part.stat().st_mode & 0o077:
                    part.chmod(0o600)
        problem = untrusted_side_file(self.path)  # SQLite would write into it without a question
        if problem is not None:
            raise LogError(f"not using the call log {self.path}: {problem}; delete it, or point {ENV_VAR} elsewhere")

    def _connect(self, create: bool) -> sqlite3.Connection:
        if create:
            return sqlite3.connect(str(self.path), timeout=5.0)
        uri = self.path.resolve().as_uri()
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=5.0)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:  # a WAL file on a read-only mount: no -shm can be made, read it as it is
            db.close()
            return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=5.0)

    def _close_quietly(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()

    def _version(self, create: bool) -> int:
        db = self.db
        unknown = MIGRATIONS.unknown(db)  # before anything is written: a newer barsym's file stays as it is
        if unknown:
            raise LogError(
                f"{self.path} was written by a newer barsym (migration {unknown[0]}); upgrade barsym, "
                f"or point {ENV_VAR} elsewhere"
            )
        if create:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            MIGRATIONS.apply(db)
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:  # not "no such table: meta": another database, or a log made and never written
            raise sqlite3.DatabaseError("it has no barsym tables")
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("no schema version")
        try:
            return int(str(row[0]).strip())
        except ValueError:
            raise sqlite3.DatabaseError(f"its schema version {str(row[0])[:40]!r} is not a number") from None

    def _text(self, body: str) -> str:
        sha = _sha(body)
        self.db.execute("INSERT OR IGNORE INTO texts VALUES (?, ?)", (sha, body))
        return sha

    def start_run(self, command: str, planner: str, goal: str, model: str | None) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (started, command, planner, goal, model) VALUES (?, ?, ?, ?, ?)",
            (time.time(), redact(command), planner, redact(goal), redact(model or "") or None),
        )
        self.db.commit()
        self.run = cur.lastrowid
        return self.run

    def record(
        self,
        *,
        goal: str,
        attempt: int,
        messages: list[dict[str, str]],
        prefix: int,
        grammar: str,
        reply: str | None,
        verdict: Verdict,
        problems: list[str],
        seconds: float,
        temperature: float,
        prompt_tokens: int | None = None,
        evaluated_tokens: int | None = None,
        completion_tokens: int | None = None,
        evaluations: int | None = None,
    ) -> None:
        """One call; ``prefix`` leading messages are the fixed prefix, stored once. Secrets are redacted first."""
        messages = [{**m, "content": redact(m.get("content") or "")} for m in messages]
        reply = redact(reply) if reply is not None else None
        problems = [redact(p) for p in problems]
        head = json.dumps(messages[:prefix]) if prefix else None
        prefix_sha = self._text(head) if head else None
        self.db.execute(
            "INSERT INTO calls (run_id, at, goal, attempt, prefix_sha, messages, grammar_sha, reply, verdict,"
            " problems, seconds, temperature, prompt_tokens, evaluated_tokens, completion_tokens, evaluations)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.run,
                time.time(),
                redact(goal),
                attempt,
                prefix_sha,
                json.dumps(messages[prefix:]),
                self._text(grammar),
                reply,
                Verdict(verdict).value,
                json.dumps(problems),
                seconds,
                temperature,
                prompt_tokens,
                evaluated_tokens,
                completion_tokens,
                evaluations,
            ),
        )
        self.db.commit()

    def recent(self, limit: int | None = 10) -> list[CallRecord]:
        """The last ``limit`` calls (None: all), oldest first; LogError naming damaged rows (see :meth:`readable`)."""
        records, damaged = self.readable(limit)
        if damaged:
            raise LogError(f"{self.path}: {damaged_summary(damaged)}")
        return records

    def readable(
        self, limit: int | None = 10, run: int | None = None, command: str | None = None
    ) -> tuple[list[CallRecord], list[tuple[int, str]]]:
        """The last ``limit`` calls that can be read, oldest first, and the (id, why) of those that cannot;
        only those of run ``run`` and of runs whose command line contains ``command``, where given.

        SQLite keeps any value in any column, and a file can be edited: every
        field is checked before it becomes a :class:`CallRecord`.
        """
        where, values = [], []
        if run is not None:
            where.append("c.run_id = ?")
            values.append(run)
        if command is not None:
            where.append("instr(r.command, ?) > 0")  # a plain substring: no LIKE wildcards in a user's text
            values.append(command)
        query = (
            "SELECT c.id, c.at, c.run_id, COALESCE(r.command, ''), c.goal, c.attempt, p.body, c.messages,"
            " g.body, c.reply, c.verdict, c.problems, c.seconds, c.temperature, c.prompt_tokens,"
            " c.evaluated_tokens, c.completion_tokens, c.evaluations, r.model FROM calls c"
            " LEFT JOIN runs r ON r.id = c.run_id LEFT JOIN texts p ON p.sha = c.prefix_sha"
            " LEFT JOIN texts g ON g.sha = c.grammar_sha"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY c.id DESC"
        )
        if limit is not None:
            query += " LIMIT ?"
            values.append(limit)
        try:
            rows = self.db.execute(query, values).fetchall()
        except sqlite3.DatabaseError as exc:
            raise LogError(f"cannot read {self.path}: {exc}") from None
        out, damaged = [], []
        for row in reversed(rows):
            try:
                out.append(record_from_row(row))
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
                damaged.append((row[0], str(exc)))
        return out, damaged

    def close(self) -> None:
        self.db.close()


_warned: set[str] = set()


def open_log(path: Path | None = None) -> CallLog | None:
    """The log to write to (default path), or None when logging is off or the file cannot be used.

    An unusable file is warned about once per process (naming it), and the plan goes on without logging.
    """
    path = path if path is not None else default_log_path()
    if path is None:
        return None
    try:
        return CallLog(path)
    except (OSError, sqlite3.Error, LogError, ValueError) as exc:
        if str(path) not in _warned:
            _warned.add(str(path))
            text = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
            warnings.warn(f"not logging LLM calls: {text}", stacklevel=2)
        return None
