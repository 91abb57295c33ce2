"""OpenAI-compatible backend against a real ``python -m llama_cpp.server``.

The fixture starts the server on a free 127.0.0.1 port with the packaged
SmolLM2 GGUF, waits a bounded time for ``/v1/models`` to answer, and always
terminates the process (kill after a grace period).  The server's own log
goes to a temp file and is shown if startup fails.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from barsym.llm import LLMOptions, OpenAIHTTPBackend, decomposition_grammar

pytestmark = pytest.mark.llm

STARTUP_TIMEOUT_S = 60
SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
ITEMS = ["oak_log", "oak_planks", "stick", "crafting_table", "wooden_pickaxe", "cobblestone"]


def _get(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def llama_server(gguf_path, tmp_path_factory):
    missing = [m for m in ("llama_cpp", *SERVER_MODULES) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"llama_cpp.server dependencies missing: {missing} "
            "(pip install uvicorn fastapi sse-starlette starlette-context pydantic-settings)"
        )
    import socket

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
        "1024",
        "--verbose",
        "false",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _get(base + "/v1/models"):
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


def test_grammar_constrained_request_to_real_server(llama_server):
    backend = OpenAIHTTPBackend(llama_server, timeout=60, options=LLMOptions(max_tokens=150))
    grammar = decomposition_grammar(ITEMS, tools=["wooden_pickaxe"], max_subgoals=2)
    messages = [
        {
            "role": "system",
            "content": "Reply with JSON: the step that makes the goal, and its subgoals.",
        },
        {"role": "user", "content": "Goal: 1 crafting_table"},
    ]
    reply = backend.complete(messages, grammar=grammar)
    assert reply.finish_reason == "stop", reply.text
    data = json.loads(reply.text)
    assert data["step"]["item"] in ITEMS
    assert all(sub["item"] in ITEMS for sub in data["subgoals"])
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    # Same request again: greedy decoding on the server is reproducible too.
    assert backend.complete(messages, grammar=grammar).text == reply.text
