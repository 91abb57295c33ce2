"""Issue 20: the call log keeps no secret, writes into no other file, and a damaged one never stops a plan.

Security first (a link to another SQLite file, secrets on the command line and
in prompts, file modes), then the damaged-log table: each damage is shown by
``barsym logs`` as one line naming the file and the call, with the readable
calls still shown, and ``plan`` with that log warns once and plans.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import warnings
from pathlib import Path

import pytest

from barsym.llm import ScriptedLLM
from barsym.model import Goal
from barsym.planner import make_planner
from barsym.reasoning.calls import call_log as call_log_module
from barsym.reasoning.calls.call_log import CallLog, LogError, open_log
from cli_run import one_line, run
from loopback import ChatStub

SECRET = "sk-live-0123456789abcdef"
PASSWORD = "hunter2-pass"
STICK = "craft 4 stick: 2 planks"


def _write_one_call(path: Path, command: str = "barsym plan stick", content: str = "Goal: 4 stick") -> None:
    log = CallLog(path)
    log.start_run(command, "bar", "4 stick", None)
    log.record(
        goal="4 stick",
        attempt=1,
        messages=[{"role": "user", "content": content}],
        prefix=0,
        grammar="root ::= x",
        reply=STICK,
        verdict="accepted",
        problems=[],
        seconds=0.5,
        temperature=0.0,
    )
    log.close()


def _raw_bytes(path: Path) -> bytes:
    """Everything SQLite wrote: the file and any WAL beside it."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _plan_with_log(kb, monkeypatch, path) -> tuple[bool, list[str]]:
    """A bar plan with the default log at ``path``: (valid, warnings)."""
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    call_log_module._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        planner = make_planner("bar", kb, backend=ScriptedLLM([STICK] * 4))
        valid = planner.plan(Goal(item="stick", count=4)).validation.valid
    return valid, [str(w.message) for w in caught]


# ----------------------------------------------------------------- 5. a link to another SQLite file


def test_a_log_path_that_links_to_another_database_is_not_written(kb, tmp_path, monkeypatch):
    other = tmp_path / "accounts.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE accounts (name TEXT)")
    link = tmp_path / "logs.db"
    link.symlink_to(other)
    valid, said = _plan_with_log(kb, monkeypatch, link)
    assert valid
    assert len(said) == 1 and "is a symbolic link" in said[0] and str(link) in said[0]
    with sqlite3.connect(other) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"accounts"}


def test_a_log_of_another_user_or_writable_by_others_is_not_written(tmp_path):
    path = tmp_path / "logs.db"
    _write_one_call(path)
    path.chmod(0o666)
    with pytest.raises(LogError, match=r"can be written by other users \(mode 0666\)"):
        CallLog(path)
    if os.getuid() == 0:
        path.chmod(0o600)
        os.chown(path, 65534, 65534)
        with pytest.raises(LogError, match="owned by another user"):
            CallLog(path)


# ----------------------------------------------------------------- 2b. no secret in the log


def test_secrets_never_reach_the_log_file(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "logs.db"
    command = f"barsym plan stick --llm-url http://me:{PASSWORD}@10.0.0.7:8080 --api-key {SECRET} --api-key={SECRET}x"
    _write_one_call(path, command, content=f"Authorization: Bearer {SECRET} and http://u:{PASSWORD}@host/")
    raw = _raw_bytes(path)
    assert SECRET.encode() not in raw and PASSWORD.encode() not in raw
    record = CallLog(path, create=False).recent(None)[0]
    assert record.command == ("barsym plan stick --llm-url http://me:***@10.0.0.7:8080 --api-key *** --api-key=***")
    assert SECRET not in record.messages[0]["content"] and "Bearer ***" in record.messages[0]["content"]


def test_the_key_from_the_environment_is_redacted_wherever_it_appears(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "logs.db"
    _write_one_call(path, content=f"the model echoed {SECRET} back")
    assert SECRET.encode() not in _raw_bytes(path)


def test_a_plan_command_line_with_a_key_is_logged_without_it(kb, tmp_path, monkeypatch):
    path = tmp_path / "logs.db"
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    planner = make_planner("bar", kb, backend=ScriptedLLM([STICK] * 4), command=f"barsym plan stick --api-key {SECRET}")
    assert planner.plan(Goal(item="stick", count=4)).validation.valid
    planner.decomposer.caller.log.close()
    assert SECRET.encode() not in _raw_bytes(path)


# ----------------------------------------------------------------- 3. file modes


def test_a_fresh_log_is_0600_in_a_0700_folder(tmp_path):
    path = tmp_path / "fresh" / "barsym" / "logs.db"
    old = os.umask(0o022)
    try:
        log = CallLog(path)
        log.start_run("barsym plan stick", "bar", "4 stick", None)
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}
        log.close()
    finally:
        os.umask(old)
    assert modes["logs.db"] == 0o600 and all(mode == 0o600 for mode in modes.values()), modes
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


def test_an_old_world_readable_log_is_made_private(tmp_path):
    path = tmp_path / "logs.db"
    _write_one_call(path)
    path.chmod(0o644)
    CallLog(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# ----------------------------------------------------------------- damaged logs: one line, the rest shown


def _damage(path: Path, statement: str) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(statement)


DAMAGED = [
    ("bad schema version", "UPDATE meta SET value = 'one' WHERE key = 'schema_version'", "schema version 'one'"),
    ("bad JSON in messages", "UPDATE calls SET messages = '[{\"role\": ' WHERE id = 1", "#1"),
    ("messages not a list", 'UPDATE calls SET messages = \'{"role": "user"}\' WHERE id = 1', "not a list"),
    ("a missing content", 'UPDATE calls SET messages = \'[{"role": "user"}]\' WHERE id = 1', "no text content"),
    ("seconds a word", "UPDATE calls SET seconds = 'slow' WHERE id = 1", "seconds is 'slow'"),
    ("problems not texts", "UPDATE calls SET problems = '[1, 2]' WHERE id = 1", "problems is not a list of texts"),
    ("attempt a float", "UPDATE calls SET attempt = 1.5 WHERE id = 1", "attempt is 1.5"),
    ("temperature a word", "UPDATE calls SET temperature = 'hot' WHERE id = 1", "temperature is 'hot'"),
]


@pytest.mark.parametrize("what, statement, words", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_barsym_logs_names_a_damaged_log_in_one_line(tmp_path, monkeypatch, capsys, what, statement, words):
    path = tmp_path / "logs.db"
    _write_one_call(path)
    _write_one_call(path, content="Goal: the second call")
    _damage(path, statement)
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    code, out, err = run(capsys, "logs")
    assert code == 2 and one_line(err), err
    assert str(path) in err and words in err
    if what != "bad schema version":  # the readable call is still shown
        assert "the second call" in out and "#2" in out


@pytest.mark.parametrize(
    "what, statement, words",
    DAMAGED[:1]
    + [
        ("not a log at all", None, "not a barsym call log"),
        # found at the first call written: the schema is not run again on every open (its migration is recorded)
        ("calls of another shape", "DROP TABLE calls; CREATE TABLE calls (x)", "no column named run_id"),
    ],
    ids=["bad schema version", "not sqlite", "calls of another shape"],
)
def test_a_damaged_log_never_stops_a_plan(kb, tmp_path, monkeypatch, what, statement, words):
    path = tmp_path / "logs.db"
    if statement is None:
        path.write_text("not sqlite " * 200)
        path.chmod(0o600)
    else:
        _write_one_call(path)
        _damage(path, statement)
    valid, said = _plan_with_log(kb, monkeypatch, path)
    assert valid
    assert len(said) == 1 and str(path) in said[0] and words in said[0], said


def test_a_damaged_log_is_warned_about_once_per_process(kb, tmp_path, monkeypatch):
    path = tmp_path / "logs.db"
    _write_one_call(path)
    _damage(path, DAMAGED[0][1])
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    call_log_module._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert open_log() is None and open_log() is None
    assert len(caught) == 1


def test_barsym_plan_with_a_bad_log_plans_and_warns_once(tmp_path, monkeypatch, capsys):
    """The issue's case end to end: ``BARSYM_LOG_DB=<bad log> barsym plan stick`` with a model server."""
    path = tmp_path / "logs.db"
    _write_one_call(path)
    _damage(path, DAMAGED[0][1])
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    call_log_module._warned.clear()
    stub = ChatStub(lambda messages: STICK)
    try:
        code, out, err = run(capsys, "plan", "stick", "--count", "4", "--planner", "bar", "--llm-url", stub.url)
    finally:
        stub.close()
    assert code == 0, err
    assert "craft 4 stick" in out
    lines = [line for line in err.splitlines() if "not logging LLM calls" in line]
    assert len(lines) == 1 and str(path) in lines[0] and "schema version 'one' is not a number" in lines[0]
    assert "invalid literal" not in err


# ----------------------------------------------------------------- a read-only mount


@pytest.fixture()
def read_only_mount(tmp_path):
    folder = tmp_path / "mnt"
    folder.mkdir()
    if (
        os.getuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(folder)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("needs root and mount to make a read-only file system")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_log_on_a_read_only_mount_is_shown_not_called_foreign(read_only_mount, monkeypatch, capsys):
    path = read_only_mount / "logs.db"
    log = CallLog(path)
    log.start_run("barsym plan stick", "bar", "4 stick", None)
    log.record(
        goal="4 stick",
        attempt=1,
        messages=[{"role": "user", "content": "Goal: 4 stick"}],
        prefix=0,
        grammar="root ::= x",
        reply=STICK,
        verdict="accepted",
        problems=[],
        seconds=0.5,
        temperature=0.0,
    )
    log.close()
    assert subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)]).returncode == 0
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    code, out, err = run(capsys, "logs", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["reply"] == STICK
    call_log_module._warned.clear()
    with pytest.warns(UserWarning) as said:
        assert open_log() is None  # writing is off, with one line that does not call it foreign
    assert "not a barsym call log" not in str(said[0].message)


# ----------------------------------------------------------------- issue 34: a server that echoes the secrets back

ECHOED_KEY = "sk-echoed-9876543210fedcba"
ECHOED_PASSWORD = "s3cret-in-the-url"


@pytest.mark.parametrize("where", ["api key", "url password"])
def test_a_secret_the_server_echoes_is_in_no_file_and_no_output(tmp_path, monkeypatch, capsys, where):
    from barsym import redact as redact_module

    monkeypatch.setattr(redact_module, "_KNOWN", set())  # this test's secrets only
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "logs.db"
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    secret = ECHOED_KEY if where == "api key" else ECHOED_PASSWORD
    stub = ChatStub(lambda messages: f"craft 4 {secret}: 2 planks")  # a reply quoting the secret
    url = stub.url if where == "api key" else stub.url.replace("http://", f"http://me:{secret}@")
    key = ["--api-key", ECHOED_KEY] if where == "api key" else []
    out_file = tmp_path / "plan.json"
    try:
        code, out, err = run(
            capsys,
            "plan",
            "stick",
            "--count",
            "4",
            "--planner",
            "llm-only",
            "--llm-url",
            url,
            *key,
            "--format",
            "json",
            "-o",
            out_file,
        )
    finally:
        stub.close()
    assert "Traceback" not in err
    assert secret not in out and secret not in err and secret not in out_file.read_text()
    assert secret.encode() not in _raw_bytes(path)  # calls.reply, calls.problems
    code, shown, err = run(capsys, "logs", "--full")
    assert code == 0 and secret not in shown and "craft 4 ***" in shown
