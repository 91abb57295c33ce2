"""Every model call, kept in a SQLite file: prompt, grammar, reply, verdict, time.

When a plan looks odd the question is always "what did the model see, what
did it say, and why was that refused?". The counters in ``PlanResult.stats``
cannot answer it; this log can, and ``barsym logs`` shows it (like simonw/llm's
``llm logs``). One row per call, written when the verifier's verdict is known.

Storage: stdlib ``sqlite3`` in WAL mode (a reader never blocks the planner),
one commit per call (an interrupted plan keeps what it did). The schema has a
version in ``meta``; a file written by a newer barsym is refused rather than
misread. Texts that repeat -- the few-shot prefix of every prompt, grammars --
are stored once in ``texts``, keyed by SHA-256, so a 53-task evaluation adds
about a megabyte, not a hundred. The file is ``$BARSYM_LOG_DB``, else
``logs.db`` in the cache folder; ``BARSYM_LOG_DB=off`` turns logging off. A
log that cannot be written (read-only disk, locked) is switched off with one
warning: logging never stops a plan.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import warnings
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..kb import cache_dir

__all__ = ["CallLog", "CallRecord", "LogError", "Verdict", "default_log_path", "open_log"]

SCHEMA_VERSION = 1
ENV_VAR = "BARSYM_LOG_DB"
OFF = ("off", "none", "0", "false", "no")

_SCHEMA = """
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


class LogError(Exception):
    """The log file cannot be read (not SQLite, or written by a newer barsym)."""


class Verdict(str, Enum):
    """What became of a reply."""

    ACCEPTED = "accepted"  # the verifier accepted it (or, for llm-only, it was a readable step)
    REFUSED = "refused"  # the verifier named problems
    UNREADABLE = "unreadable"  # not a step at all
    REPEATED = "repeated"  # a greedy retry repeated a refused answer: the goal went to the fallback
    BACKEND_ERROR = "backend-error"  # no reply


@dataclass(frozen=True)
class CallRecord:
    """One logged call as ``barsym logs`` shows it."""

    id: int
    at: float
    run: int | None
    command: str
    goal: str
    attempt: int
    messages: list[dict[str, str]]  # the whole prompt, prefix included
    grammar: str
    reply: str | None
    verdict: str
    problems: list[str]
    seconds: float
    temperature: float
    prompt_tokens: int | None
    evaluated_tokens: int | None
    completion_tokens: int | None
    evaluations: int | None


def default_log_path() -> Path | None:
    """``$BARSYM_LOG_DB``, else ``logs.db`` in barsym's cache folder; None when logging is off."""
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured.lower() in OFF:
        return None
    return Path(configured) if configured else cache_dir() / "logs.db"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CallLog:
    """An open log; :meth:`start_run` once per plan, :meth:`record` once per call."""

    def __init__(self, path: Path, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise FileNotFoundError(str(self.path))
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=5.0)
            version = self._version(create)
        except sqlite3.DatabaseError as exc:
            raise LogError(f"{self.path} is not a barsym call log ({exc})") from None
        if version > SCHEMA_VERSION:
            self.db.close()
            raise LogError(f"{self.path} has schema version {version}; this barsym reads up to "
                           f"{SCHEMA_VERSION} (upgrade barsym, or point {ENV_VAR} elsewhere)")
        self.run: int | None = None

    def _version(self, create: bool) -> int:
        db = self.db
        if create:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            db.commit()
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("no schema version")
        return int(row[0])

    def _text(self, body: str) -> str:
        sha = _sha(body)
        self.db.execute("INSERT OR IGNORE INTO texts VALUES (?, ?)", (sha, body))
        return sha

    def start_run(self, command: str, planner: str, goal: str, model: str | None) -> int:
        cur = self.db.execute("INSERT INTO runs (started, command, planner, goal, model) VALUES (?, ?, ?, ?, ?)",
                              (time.time(), command, planner, goal, model))
        self.db.commit()
        self.run = cur.lastrowid
        return self.run

    def record(self, *, goal: str, attempt: int, messages: list[dict[str, str]], prefix: int, grammar: str,
               reply: str | None, verdict: Verdict, problems: list[str], seconds: float, temperature: float,
               prompt_tokens: int | None = None, evaluated_tokens: int | None = None,
               completion_tokens: int | None = None, evaluations: int | None = None) -> None:
        """One call; ``prefix`` leading messages are the fixed prefix, stored once."""
        head = json.dumps(messages[:prefix]) if prefix else None
        prefix_sha = self._text(head) if head else None
        self.db.execute(
            "INSERT INTO calls (run_id, at, goal, attempt, prefix_sha, messages, grammar_sha, reply, verdict,"
            " problems, seconds, temperature, prompt_tokens, evaluated_tokens, completion_tokens, evaluations)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run, time.time(), goal, attempt, prefix_sha, json.dumps(messages[prefix:]), self._text(grammar),
             reply, Verdict(verdict).value, json.dumps(problems), seconds, temperature, prompt_tokens,
             evaluated_tokens, completion_tokens, evaluations))
        self.db.commit()

    def recent(self, limit: int | None = 10) -> list[CallRecord]:
        """The last ``limit`` calls (None: all), oldest first."""
        query = ("SELECT c.id, c.at, c.run_id, COALESCE(r.command, ''), c.goal, c.attempt, p.body, c.messages,"
                 " g.body, c.reply, c.verdict, c.problems, c.seconds, c.temperature, c.prompt_tokens,"
                 " c.evaluated_tokens, c.completion_tokens, c.evaluations FROM calls c"
                 " LEFT JOIN runs r ON r.id = c.run_id LEFT JOIN texts p ON p.sha = c.prefix_sha"
                 " LEFT JOIN texts g ON g.sha = c.grammar_sha ORDER BY c.id DESC")
        try:
            rows = self.db.execute(query + (" LIMIT ?" if limit is not None else ""),
                                   (limit,) if limit is not None else ()).fetchall()
        except sqlite3.DatabaseError as exc:
            raise LogError(f"cannot read {self.path}: {exc}") from None
        out = []
        for (id_, at, run, command, goal, attempt, head, tail, grammar, reply, verdict, problems, seconds,
             temperature, prompt, evaluated, completion, evaluations) in reversed(rows):
            messages = (json.loads(head) if head else []) + json.loads(tail)
            out.append(CallRecord(id_, at, run, command, goal, attempt, messages, grammar or "", reply, verdict,
                                  json.loads(problems), seconds, temperature, prompt, evaluated, completion,
                                  evaluations))
        return out

    def close(self) -> None:
        self.db.close()


def open_log(path: Path | None = None) -> CallLog | None:
    """The log to write to (default path), or None when logging is off or the file cannot be used (warned)."""
    path = path if path is not None else default_log_path()
    if path is None:
        return None
    try:
        return CallLog(path)
    except (OSError, sqlite3.Error, LogError) as exc:
        warnings.warn(f"not logging LLM calls to {path}: {exc}", stacklevel=2)
        return None
