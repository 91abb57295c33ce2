"""The server route as docs/install.md writes it (issue 35, item 4): the ``[server]`` extra, and the commands pasted.

``python -m llama_cpp.server`` needs llama-cpp-python's own ``[server]`` extra
(``No module named 'uvicorn'`` without it), so barsym has a ``[server]`` extra at
the version ``[llm]`` pins. The second test runs the documented commands as
written, with the interpreter running the tests for ``.venv/bin/python`` and a
free port for 8000.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from barsym.llm.install import importable
from testdata import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
DOC = REPO / "docs" / "install.md"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
STARTUP_S = 180  # a busy 2-core machine loads the server and the model slowly


def _pin(requirements: list[str], name: str) -> str:
    found = [r for r in requirements if re.match(rf"{re.escape(name)}(\[|=)", r)]
    assert len(found) == 1, (name, requirements)
    return found[0].split("==", 1)[1]


def server_blocks() -> list[str]:
    section = DOC.read_text(encoding="utf-8").split("## The model as a server", 1)[1]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_server_extra_brings_the_model_and_the_server_at_the_pinned_version():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "barsym[llm]" in extras["server"]
    assert any(r.startswith("llama-cpp-python[server]==") for r in extras["server"])
    assert _pin(extras["server"], "llama-cpp-python") == _pin(extras["llm"], "llama-cpp-python")
    install, serve = server_blocks()[0].strip().splitlines()
    assert install == ".venv/bin/pip install -e '.[server]'" and "llama_cpp.server" in serve


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _up(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _as_here(line: str, port: int) -> str:
    """A documented line with this interpreter for the clone's .venv and ``port`` for 8000."""
    python = shlex.quote(sys.executable)
    here = {"barsym": f"{python} -m barsym", "python": python}
    line = re.sub(r"(?<![\w/])\.venv/bin/(barsym|python)\b", lambda m: here[m.group(1)], line)
    return line.replace("8000", str(port))


@pytest.mark.llm
def test_the_documented_server_commands_work_when_pasted(gguf_path, server_problem, tmp_path):
    missing = [m for m in SERVER_MODULES if not importable(m)]
    if missing:
        pytest.skip(f"llama_cpp.server dependencies missing: {missing} (pip install -e '.[server]')")
    if server_problem:  # checked once per run, as for tests/conftest.py's llama_server
        pytest.skip(f"llama_cpp.server cannot run here: {server_problem} with extra buffer types, its only way")
    port = _free_port()
    serve = _as_here(server_blocks()[0].strip().splitlines()[1], port)
    (plan,) = server_blocks()[1].strip().splitlines()
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(["bash", "-c", f"exec {serve}"], stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        started = time.monotonic()
        while not _up(f"http://127.0.0.1:{port}/v1/models"):
            assert server.poll() is None, log.read_text(errors="replace")[-2000:]
            if time.monotonic() - started > STARTUP_S:
                pytest.skip(f"the server did not come up within {STARTUP_S} s on this machine")
            time.sleep(0.5)
        env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
        done = subprocess.run(["bash", "-c", _as_here(plan, port)], capture_output=True, text=True, cwd=REPO, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.startswith("Plan for 1 stone_pickaxe") and "validator: valid" in done.stdout
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
