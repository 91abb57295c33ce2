"""OpenAI-compatible HTTP backend against tiny stdlib servers on 127.0.0.1.

Each scenario (good reply, garbage, slow, HTTP errors, dropped connection)
is served by a throw-away ``http.server`` in a daemon thread; nothing leaves
the loopback interface.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from barsym.llm import (
    BackendTimeoutError,
    BackendUnavailableError,
    CompletionRequest,
    CredentialsRefusedError,
    GrammarError,
    LLMError,
    LLMOptions,
    OpenAIHTTPBackend,
)

USER = [{"role": "user", "content": "Goal: 1 stick"}]

GOOD = {
    "id": "x",
    "model": "smol",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {
        "prompt_tokens": 20,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 15},
    },
}


class Stub:
    """A loopback HTTP server answering every POST with ``respond(handler, body)``."""

    def __init__(self, respond):
        self.requests: list[dict] = []
        self.release = threading.Event()  # lets a sleeping handler finish at teardown
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                respond(self, stub)

            def log_message(self, *args):  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def send(handler, status: int, body: bytes, content_type="application/json"):
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def stub():
    servers = []

    def start(respond):
        server = Stub(respond)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_good_reply_and_request_payload(stub):
    server = stub(lambda h, s: send(h, 200, json.dumps(GOOD).encode()))
    backend = OpenAIHTTPBackend(server.url + "/v1/", api_key="secret", model="smol", timeout=5)
    reply = backend.complete(USER, max_tokens=9, grammar='root ::= "hello"', stop=["\n"])
    assert reply.text == "hello" and reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens) == (20, 2)
    assert (reply.cached_prompt_tokens, reply.evaluated_prompt_tokens) == (15, 5)
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer secret"
    body = request["body"]
    assert body["grammar"] == 'root ::= "hello"' and "response_format" not in body
    assert (body["max_tokens"], body["temperature"], body["seed"], body["stop"]) == (
        9,
        0.0,
        0,
        ["\n"],
    )
    assert body["model"] == "smol" and body["messages"] == USER


def test_json_schema_styles(stub):
    server = stub(lambda h, s: send(h, 200, json.dumps(GOOD).encode()))
    schema = {"type": "object"}
    OpenAIHTTPBackend(server.url, timeout=5).complete(USER, json_schema=schema)
    OpenAIHTTPBackend(server.url, timeout=5, schema_style="openai").complete(USER, json_schema=schema)
    llama_style, openai_style = (r["body"]["response_format"] for r in server.requests)
    assert llama_style == {"type": "json_object", "schema": schema}
    assert openai_style["type"] == "json_schema" and openai_style["json_schema"]["schema"] == schema


def test_llama_server_timings_are_read(stub):
    usage = {"prompt_tokens": 300, "completion_tokens": 4}
    reply = dict(GOOD, usage=usage, timings={"cache_n": 290, "prompt_n": 10})
    server = stub(lambda h, s: send(h, 200, json.dumps(reply).encode()))
    got = OpenAIHTTPBackend(server.url, timeout=5).complete(USER)
    assert (got.cached_prompt_tokens, got.evaluated_prompt_tokens) == (290, 10)


def test_closed_port_is_backend_unavailable(free_port):
    backend = OpenAIHTTPBackend(f"http://127.0.0.1:{free_port}", timeout=2)
    with pytest.raises(BackendUnavailableError, match="Is the server running") as info:
        backend.complete(USER)
    assert str(free_port) in str(info.value)


def test_garbage_reply_is_llm_error_with_excerpt(stub):
    server = stub(lambda h, s: send(h, 200, b"<html>oops, not json</html>", "text/html"))
    with pytest.raises(LLMError, match="not JSON.*oops, not json"):
        OpenAIHTTPBackend(server.url, timeout=5).complete(USER)


def test_json_without_choices_is_llm_error(stub):
    server = stub(lambda h, s: send(h, 200, b'{"error": "model exploded"}'))
    with pytest.raises(LLMError, match="without choices.*model exploded"):
        OpenAIHTTPBackend(server.url, timeout=5).complete(USER)


def test_slow_server_is_backend_timeout(stub):
    def sleepy(handler, server):
        server.release.wait(10)  # well past the client's timeout; released at teardown
        send(handler, 200, json.dumps(GOOD).encode())

    server = stub(sleepy)
    backend = OpenAIHTTPBackend(server.url, timeout=0.5)
    with pytest.raises(BackendTimeoutError, match="within 0.5s"):
        backend.complete(USER)


@pytest.mark.parametrize(
    "status, error, message",
    [
        (500, LLMError, "HTTP 500.*boom"),
        (422, LLMError, "HTTP 422.*boom"),
        (503, BackendUnavailableError, "not ready"),
        (401, CredentialsRefusedError, "HTTP 401.*boom.*--api-key"),
        (403, CredentialsRefusedError, "HTTP 403.*boom.*--api-key"),
    ],
)
def test_http_errors_carry_the_body(stub, status, error, message):
    server = stub(lambda h, s: send(h, status, b'{"detail": "boom"}'))
    with pytest.raises(error, match=message):
        OpenAIHTTPBackend(server.url, timeout=5).complete(USER)


def test_dropped_connection_is_backend_unavailable(stub):
    def hang_up(handler, server):
        handler.close_connection = True
        handler.connection.shutdown(2)

    server = stub(hang_up)
    with pytest.raises(BackendUnavailableError):
        OpenAIHTTPBackend(server.url, timeout=5).complete(USER)


def test_invalid_grammar_is_refused_before_sending(stub):
    # llama-cpp-python's server segfaults on a grammar it cannot parse.
    server = stub(lambda h, s: send(h, 200, json.dumps(GOOD).encode()))
    backend = OpenAIHTTPBackend(server.url, timeout=5)
    with pytest.raises(GrammarError, match="'missing' is used but never defined"):
        backend.complete(USER, grammar='root ::= "a" | missing')
    assert server.requests == []
    unchecked = OpenAIHTTPBackend(server.url, timeout=5, check_grammar=False)
    unchecked.complete(USER, grammar='root ::= "a" | missing')
    assert server.requests[0]["body"]["grammar"] == 'root ::= "a" | missing'


def test_options_and_validation():
    backend = OpenAIHTTPBackend("http://localhost:8080", options=LLMOptions(max_tokens=5))
    payload = backend.build_payload(CompletionRequest(USER, max_tokens=5, temperature=0.0, seed=0))
    assert "grammar" not in payload and "stop" not in payload and "model" not in payload
    for bad in ("127.0.0.1:8080", "ftp://x", ""):
        with pytest.raises(ValueError, match="base_url"):
            OpenAIHTTPBackend(bad)
    with pytest.raises(ValueError, match="timeout"):
        OpenAIHTTPBackend("http://127.0.0.1:1", timeout=0)
