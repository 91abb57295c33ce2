"""Limits and hostile conditions of issue 20: corrupt, locked and full memories, full disks, Ray, signals.

Each test sets up the condition for real (a corrupted page, a second writer
holding the lock, SQLite's page limit standing in for a full disk, a server
that is not Ray, a SIGTERM) and checks the one line barsym prints, and that
nothing already done is lost.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest
from tmpfs import mounted_tmpfs

from barsym.eval import workers as workers_module
from barsym.eval.workers import ExecutorError
from barsym.memory import MemoryFileError, MemoryStore
from barsym.memory.store import DecompositionRecord
from cli_run import one_line, run
from testdata import BAR_DIR, REPO

pytestmark = pytest.mark.skipif(not BAR_DIR.exists(), reason="BAR dataset not available")


def _built(capsys, path: Path, tasks: int = 3) -> Path:
    code, _, err = run(
        capsys, "memory", "build", "--memory", path, "--dataset", BAR_DIR, "--limit", tasks, "--runs", "3"
    )
    assert code == 0, err
    return path


# ------------------------------------------------------------------ a corrupt memory: one line, read-only or not


def _corrupt(path: Path) -> None:
    """Overwrite the middle pages with noise, keeping SQLite's header (the file still opens)."""
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(page, len(data) - page, page):
        data[offset + 16 : offset + 400] = os.urandom(384)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "show"],
        ["memory", "stats"],
        ["memory", "export"],
        ["plan", "iron_pickaxe", "--planner", "symbolic"],
        ["plan", "iron_pickaxe", "--planner", "symbolic", "--record"],
    ],
    ids=["show", "stats", "export", "plan", "plan-record"],
)
def test_a_corrupt_memory_is_one_line(capsys, tmp_path, argv):
    path = _built(capsys, tmp_path / "m.sqlite", tasks=6)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    _corrupt(path)
    code, out, err = run(capsys, *argv, "--memory", path)
    assert code == 2 and one_line(err), err
    assert str(path) in err and "corrupt" in err


# ------------------------------------------------------------------ another writer holds the lock


def test_a_locked_memory_does_not_lose_the_evaluation(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))  # a short busy timeout
    other = sqlite3.connect(path, isolation_level=None)
    from barsym.memory import recorder

    original = recorder.TaskRecorder.planned

    def locked_first(self, task, result):  # the other writer takes the lock once the run is under way
        if not other.in_transaction:
            other.execute("BEGIN IMMEDIATE")
        return original(self, task, result)

    monkeypatch.setattr(recorder.TaskRecorder, "planned", locked_first)
    out_json = tmp_path / "out.json"
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--limit",
        "3",
        "--quiet",
        "--memory",
        path,
        "--record",
        "-o",
        out_json,
    )
    other.execute("ROLLBACK")
    assert code == 2 and one_line(err), err
    assert "locked by another writer (waited 0.2 s)" in err and "3 plan(s) not recorded" in err
    assert len(json.loads(out_json.read_text())["tasks"]) == 3  # the work is written all the same


def test_a_locked_memory_at_open_is_one_line(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = run(capsys, "memory", "prune", "--memory", path)
    finally:
        other.execute("ROLLBACK")
    assert code == 2 and one_line(err) and "locked by another writer" in err


# ------------------------------------------------------------------ a full disk (SQLite's page limit stands in)


def _record(i: int) -> DecompositionRecord:
    return DecompositionRecord(
        "stick",
        4,
        {"at_hand": [f"item_{i}_" + "x" * 2000], "layer": 0},
        {"type": "craft", "item": "stick", "count": 4},
        [{"item": "planks", "count": 2}],
        None,
        "symbolic",
    )


def test_a_full_memory_is_one_line_without_a_rollback_error(tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(MemoryFileError) as info:
        store.record_plan("t", "symbolic", ("stick", 4), ["craft 4 stick"], [_record(i) for i in range(40)])
    message = str(info.value)
    assert "disk is full" in message and "rollback" not in message and "\n" not in message
    assert store.counts()["plans"] == 0  # nothing half written
    store.close()


def test_a_run_file_on_a_full_disk_is_one_line_and_keeps_what_was_done(capsys, tmp_path, monkeypatch):
    from barsym.eval import runfile

    path = tmp_path / "run.jsonl"
    writes = {"n": 0}
    real_fsync = os.fsync

    def fsync(fd):
        writes["n"] += 1
        if writes["n"] > 2:  # the header and one task fit; then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(runfile.os, "fsync", fsync)
    argv = ["eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "3", "--run", path, "--quiet"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and one_line(err), err
    assert "No space left on device" in err and "kept" in err
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)  # no half line left behind


@pytest.mark.parametrize("target", ["/dev/full", "fifo"])
def test_a_run_file_that_is_not_a_file_is_one_line(capsys, tmp_path, target):
    if target == "fifo":
        target = tmp_path / "fifo"
        os.mkfifo(target)
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "1", "--run", target)
    assert code == 2 and one_line(err) and "not a regular file" in err


# ------------------------------------------------------------------ the memory commands


@pytest.mark.parametrize(
    "argv, words",
    [
        (["prune", "--min-rate", "inf"], "--min-rate must be a finite number from 0 to 1"),
        (["prune", "--min-rate", "nan"], "--min-rate must be a finite number"),
        (["prune", "--min-rate", "2"], "--min-rate must be from 0 to 1"),
        (["prune", "--min-runs", "-5"], "--min-runs must be at least 0"),
        (["build", "--dataset", str(BAR_DIR), "--limit", "-1"], "--limit must be at least 1"),
        (["build", "--dataset", str(BAR_DIR), "--limit", "0"], "--limit must be at least 1"),
        (["build", "--dataset", str(BAR_DIR), "--runs", "100000000"], "--runs must be from 1 to 100000"),
        (["build", "--dataset", str(BAR_DIR), "--runs", "0"], "--runs must be from 1"),
    ],
)
def test_memory_numbers_are_range_checked(capsys, tmp_path, argv, words):
    path = tmp_path / "m.sqlite"
    code, out, err = run(capsys, "memory", *argv, "--memory", path)
    assert code == 2 and one_line(err) and words in err, err
    assert not path.exists()  # refused before the memory is created


@pytest.mark.parametrize("where", ["folder", "missing folder"])
def test_memory_export_to_a_folder_or_nowhere_is_one_line(capsys, tmp_path, where):
    path = _built(capsys, tmp_path / "m.sqlite", tasks=1)
    target = tmp_path if where == "folder" else tmp_path / "nowhere" / "m.jsonl"
    code, _, err = run(capsys, "memory", "export", target, "--memory", path)
    assert code == 2 and one_line(err) and "memory export" in err


def test_memory_clear_asks_or_takes_yes(capsys, tmp_path, monkeypatch):
    path = _built(capsys, tmp_path / "m.sqlite", tasks=1)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    code, _, err = run(capsys, "memory", "clear", "--memory", path)
    assert code == 2 and one_line(err) and "--yes" in err
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    code, out, _ = run(capsys, "memory", "clear", "--memory", path)
    assert code == 1 and "nothing cleared" in out
    assert json.loads(run(capsys, "memory", "stats", "--memory", path)[1])["plans"] == 1
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert run(capsys, "memory", "clear", "--memory", path)[0] == 0
    assert json.loads(run(capsys, "memory", "stats", "--memory", path)[1])["plans"] == 0
    _built(capsys, path, tasks=1)
    assert run(capsys, "memory", "clear", "--yes", "--memory", path)[0] == 0


@pytest.mark.parametrize(
    "action, words",
    [
        ("build", "--dataset"),
        ("show", "--format"),
        ("stats", "table counts"),
        ("export", "stdout"),
        ("import", "already there"),
        ("prune", "--min-rate"),
        ("clear", "--yes"),
    ],
)
def test_each_memory_action_has_its_own_help(capsys, action, words):
    with pytest.raises(SystemExit) as info:
        run(capsys, "memory", action, "--help")
    out = capsys.readouterr().out
    assert info.value.code == 0 and words in out
    others = {"--dataset", "--min-rate", "--yes", "--format"} - {words}
    assert not any(o in out for o in others if o != words)


def test_memory_show_as_json(capsys, tmp_path):
    path = _built(capsys, tmp_path / "m.sqlite", tasks=2)
    code, out, _ = run(capsys, "memory", "show", "--format", "json", "--memory", path)
    rows = json.loads(out)
    text = run(capsys, "memory", "show", "--memory", path)[1].splitlines()
    assert code == 0 and len(rows) == len(text) > 0
    assert {"goal", "step", "subgoals", "successes", "runs", "plans", "rate"} <= set(rows[0])


def test_a_memory_before_the_action_still_counts(capsys, tmp_path):
    path = _built(capsys, tmp_path / "m.sqlite", tasks=1)
    code, out, _ = run(capsys, "memory", "--memory", path, "stats")
    assert code == 0 and json.loads(out)["plans"] == 1


# ------------------------------------------------------------------ Ray: broken install, dead worker, not Ray


@pytest.fixture
def broken_ray(tmp_path, monkeypatch):
    package = tmp_path / "ray"
    package.mkdir()
    (package / "__init__.py").write_text("import _ray_missing_core_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ray", raising=False)


def test_a_broken_ray_install_is_one_line(capsys, broken_ray):
    code, out, err = run(
        capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "1", "--executor", "ray"
    )
    assert code == 2 and one_line(err) and "Ray is installed but cannot be imported" in err, err


class _Crashed(Exception):
    pass


def _fake_ray(fail_on: str | None):
    """Ray's API as the executor uses it, running each task in this process; ``fail_on``'s worker dies."""
    calls = {"remote": None}

    class Ref:
        def __init__(self, fn, args):
            self.fn, self.args = fn, args

    def remote(**options):
        calls["remote"] = options

        def wrap(fn):
            return types.SimpleNamespace(remote=lambda *args: Ref(fn, args))

        return wrap

    def get(ref):
        if fail_on is not None and ref.args[1]["name"] == fail_on:
            raise _Crashed("the worker died")
        return ref.fn(*ref.args)

    fake = types.SimpleNamespace(
        is_initialized=lambda: True,
        init=lambda **k: None,
        remote=remote,
        get=get,
        wait=lambda refs, num_returns, timeout=None: (refs[:1], refs[1:]) if timeout is None else ([], refs),
        cancel=lambda ref, force: None,
        exceptions=types.SimpleNamespace(WorkerCrashedError=_Crashed),
    )
    return fake, calls


def test_a_dead_ray_worker_is_retried_then_one_line_keeping_finished_tasks(capsys, tmp_path, monkeypatch, kb):
    from barsym.eval import load_dataset

    tasks = load_dataset(BAR_DIR, kb)[:3]
    fake, calls = _fake_ray(fail_on=tasks[1].name)
    monkeypatch.setitem(sys.modules, "ray", fake)
    path = tmp_path / "run.jsonl"
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--limit",
        "3",
        "--executor",
        "ray",
        "--run",
        path,
        "--quiet",  # no per-task lines: the one line is the error's
    )
    assert code == 2 and one_line(err), err
    assert f"running {tasks[1].key} died again after 1 retry" in err and "kept" in err
    assert calls["remote"]["max_retries"] == 1  # Ray runs a task whose worker died once more
    kept = [json.loads(line)["key"] for line in path.read_text().splitlines()[1:]]
    assert kept == [tasks[0].key]


def _server(reply: bytes):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(1024)
                    conn.sendall(reply)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return listener


@pytest.mark.parametrize(
    "reply", [b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", b""], ids=["web server", "silent"]
)
def test_a_ray_address_that_is_not_ray_fails_fast_in_one_line(capsys, monkeypatch, reply):
    fake, _ = _fake_ray(None)
    fake.is_initialized = lambda: False
    fake.init = lambda **k: pytest.fail("ray.init must not be reached")
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(workers_module, "PROBE_SECONDS", 1.0)
    listener = _server(reply)
    try:
        host, port = listener.getsockname()
        address = f"{host}:{port}"
        code, out, err = run(
            capsys,
            "eval",
            "--dataset",
            BAR_DIR,
            "--planner",
            "symbolic",
            "--limit",
            "1",
            "--executor",
            "ray",
            "--ray-address",
            address,
        )
    finally:
        listener.close()
    assert code == 2 and one_line(err) and "not Ray" in err, err


def test_the_probe_accepts_a_grpc_server():
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # what an HTTP/2 (gRPC) server sends first
    listener = _server(settings)
    try:
        host, port = listener.getsockname()
        workers_module._probe(f"{host}:{port}", timeout=2.0)
    finally:
        listener.close()
    with pytest.raises(ExecutorError, match="nothing answers there"):
        workers_module._probe("127.0.0.1:1", timeout=1.0)


# ------------------------------------------------------------------ signals

#: a CLI run slow enough to be caught part-way: every plan executed 100000 times in the stochastic world
SIGTERM_EVAL = [
    "eval",
    "--dataset",
    str(BAR_DIR),
    "--planner",
    "symbolic",
    "--world",
    "stochastic",
    "--runs",
    "100000",
    "--quiet",
]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("workers", ["2", "1"])
def test_sigterm_ends_the_workers_and_the_resource_tracker_with_143(tmp_path, workers):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from barsym.cli import main; raise SystemExit(main())",
            *SIGTERM_EVAL,
            "--workers",
            workers,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    want = 3 if workers == "2" else 0  # two workers and the resource tracker; a serial run has none
    children: list[int] = []
    for _ in range(1200):  # wait (up to two minutes on a busy machine) until the workers are up
        children = _children(process.pid)
        if len(children) >= want or process.poll() is not None:
            break
        time.sleep(0.1)
    time.sleep(1.0 if want else 3.0)  # into the tasks (a serial run: past loading the knowledge base)
    assert process.poll() is None and len(children) >= want, children
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 143
    for _ in range(100):
        if not any(_alive(pid) for pid in children):
            break
        time.sleep(0.1)
    assert [pid for pid in children if _alive(pid)] == []  # no orphan left with PPID 1


REASSERT = textwrap.dedent("""
    import ctypes, os, signal, time
    from barsym.eval.interrupt import reassert_sigint
    libc = ctypes.CDLL(None)
    libc.signal(signal.SIGINT, ctypes.c_void_p(1))  # SIG_IGN set under Python, as a native library might
    reassert_sigint()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(2)
        print("lost")
    except KeyboardInterrupt:
        print("honoured")
""")


def test_sigint_replaced_by_a_native_library_is_honoured_again(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", REASSERT], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "honoured", out.stderr


DYING = textwrap.dedent("""
    import os
    from barsym.testing.fakes import facts_model

    def dies_once():  # the first worker to build the planner dies; Ray's retry builds it again
        mark = os.environ["DIE_MARK"]
        if not os.path.exists(mark):
            open(mark, "w").close()
            os._exit(1)
        return facts_model()

    def always_dies():
        os._exit(1)
""")

RAY_RUN = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from barsym.eval import load_dataset
    from barsym.eval.scale import run_evaluation
    from barsym.eval.spec import RunSpec
    from barsym.eval.workers import ExecutorError
    from barsym.kb import load_kb

    kb = load_kb()
    tasks = load_dataset(Path(sys.argv[1]), kb)[:2]
    once = run_evaluation(RunSpec("bar", backend="dying:dies_once"), tasks, kb, name="bar", executor="ray")
    print(json.dumps(sorted(once.records)), flush=True)
    try:
        run_evaluation(RunSpec("bar", backend="dying:always_dies"), tasks, kb, name="bar", executor="ray")
        print("no error")
    except ExecutorError as exc:
        print("error:", exc)
""")


def test_a_killed_real_ray_worker_is_retried_once_then_one_line(tmp_path, kb):
    pytest.importorskip("ray", reason="Ray is optional: pip install 'barsym[ray]'")
    (tmp_path / "dying.py").write_text(DYING)
    (tmp_path / "ray_run.py").write_text(RAY_RUN)
    path = os.pathsep.join([str(REPO / "src"), str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "DIE_MARK": str(tmp_path / "mark")}
    out = subprocess.run(
        [sys.executable, str(tmp_path / "ray_run.py"), str(BAR_DIR)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = out.stdout.splitlines()
    from barsym.eval import load_dataset

    keys = sorted(t.key for t in load_dataset(BAR_DIR, kb)[:2])
    assert json.loads(lines[0]) == keys, out.stderr[-2000:]  # the task whose worker died once was run again
    assert lines[1].startswith("error: the Ray worker running") and "died again after 1 retry" in lines[1]
    assert len(lines) == 2  # Ray's own "A worker died ..." messages kept off stdout


RAY_SIGTERM = textwrap.dedent("""
    import sys
    from pathlib import Path
    from barsym.eval.interrupt import terminated_as_exit
    from barsym.eval import load_dataset
    from barsym.eval.scale import run_evaluation
    from barsym.eval.spec import RunSpec
    from barsym.kb import load_kb

    kb = load_kb()
    tasks = load_dataset(Path(sys.argv[1]), kb)
    with terminated_as_exit():
        run_evaluation(RunSpec("bar", backend="barsym.testing.fakes:slow_facts_model"), tasks, kb, name="bar",
                       executor="ray", workers=2, on_record=lambda record: print("record", flush=True))
""")


def _ray_processes() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if any(word in line for word in (b"raylet", b"gcs_server", b"default_worker")):
                found.add(int(entry.name))
    return found


def test_sigterm_with_ray_is_143_and_leaves_no_ray_process(tmp_path):
    pytest.importorskip("ray", reason="Ray is optional: pip install 'barsym[ray]'")
    before = _ray_processes()
    script = tmp_path / "ray_sigterm.py"
    script.write_text(RAY_SIGTERM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    errors = tmp_path / "stderr.txt"  # a file, not a pipe: Ray may write more than a pipe holds while no one reads
    with errors.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(script), str(BAR_DIR)], env=env, stdout=subprocess.PIPE, stderr=stderr
        )
    assert process.stdout.readline().strip() == b"record"  # Ray is up and tasks are finishing
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=120)
    # a rare exit 1 here (once in many CI runs, not reproduced in 8 runs under load) is kept with its cause
    assert code == 143, errors.read_text(errors="replace")[-3000:]
    for _ in range(300):
        left = _ray_processes() - before
        if not any(_alive(pid) for pid in left):
            break
        time.sleep(0.1)
    assert [pid for pid in left if _alive(pid)] == []


def test_plan_record_into_a_locked_memory_still_prints_the_plan(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))
    other = sqlite3.connect(path, isolation_level=None)
    import barsym.memory.recorder as recorder  # plan imports record from here when it records

    original = recorder.record

    def locked(*args, **kwargs):
        other.execute("BEGIN IMMEDIATE")
        return original(*args, **kwargs)

    monkeypatch.setattr(recorder, "record", locked)
    try:
        code, out, err = run(
            capsys, "plan", "stick", "--planner", "symbolic", "--memory", path, "--record", "--format", "bar"
        )
    finally:
        other.execute("ROLLBACK")
    assert code == 2 and one_line(err) and "locked by another writer" in err and "not recorded" in err
    assert '"obj_name": "stick"' in out  # the plan itself is not lost


# ------------------------------------------------------------------ issue 34: a real full disk, a lock held first, SIGTERM


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (where ``mount`` is permitted: as root, as on CI); a filler takes all but ``room`` bytes."""
    with mounted_tmpfs(tmp_path, "64k") as folder:

        def fill(room: int) -> None:
            with open(folder / "filler", "wb") as filler:
                filler.write(b"\0" * (64 * 1024 - room))

        yield folder, fill


def test_a_run_file_on_a_real_full_disk_is_one_line_without_a_half_line(capsys, small_disk):
    folder, fill = small_disk
    fill(8192)  # two pages: the header and a few records fit, then the disk is full
    path = folder / "run.jsonl"
    code, out, err = run(
        capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "20", "--quiet", "--run", path
    )
    assert code == 2 and one_line(err), err  # not OSError [Errno 28] from close()
    assert "No space left on device" in err and "kept" in err and "resume" in err
    data = path.read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())  # no half line
    kept = len(data.splitlines()) - 1
    assert 0 < kept < 20 and f"{kept} finished task(s)" in err


def test_plan_record_with_the_lock_held_before_it_starts_prints_the_plan(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # held before barsym starts
    try:
        code, out, err = run(capsys, "plan", "cobblestone", "--planner", "symbolic", "--memory", path, "--record")
    finally:
        other.execute("ROLLBACK")
    assert code == 2 and one_line(err), err
    assert "locked by another writer" in err and "not recorded" in err and "without the memory" in err
    assert "mine 1 cobblestone" in out  # the plan is printed


def test_plan_from_a_locked_memory_without_record_warns_and_plans(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")  # a rollback-journal writer: even readers wait
    try:
        code, out, err = run(capsys, "plan", "cobblestone", "--planner", "symbolic", "--memory", path)
    finally:
        other.execute("ROLLBACK")
    assert code == 0 and one_line(err) and "warning" in err and "locked by another writer" in err, err
    assert "mine 1 cobblestone" in out


def test_eval_record_with_the_lock_held_before_it_starts_keeps_going(capsys, tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    monkeypatch.setattr(MemoryStore.__init__, "__defaults__", (False, 0.2))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    out_json = tmp_path / "out.json"
    argv = ["eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "3", "--quiet"]
    try:
        code, out, err = run(capsys, *argv, "--memory", path, "--record", "-o", out_json)
    finally:
        other.execute("ROLLBACK")
    assert code == 2 and one_line(err), err
    assert "locked by another writer" in err and "no plan recorded" in err
    assert len(json.loads(out_json.read_text())["tasks"]) == 3 and "Acc" in out


def test_sigterm_during_eval_run_says_how_to_resume(tmp_path):
    run_file = tmp_path / "run.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from barsym.cli import main; raise SystemExit(main())",
            *SIGTERM_EVAL,
            "--run",
            run_file,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    for _ in range(1200):  # until the first task is in the run file (up to two minutes on a busy machine)
        if run_file.exists() and run_file.read_bytes().count(b"\n") >= 2 or process.poll() is not None:
            break
        time.sleep(0.1)
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    err = process.communicate(timeout=60)[1].decode()
    assert process.returncode == 143
    last = err.strip().splitlines()[-1]
    assert last.startswith("barsym: terminated; resume with --run") and str(run_file) in last, err
    assert "finished task(s) kept" in last and "Traceback" not in err
