"""Issue 20: the API key goes to the server given and nowhere else, and a hostile server is one clear line.

Security first -- redirects, loopback spellings and proxies, plain http, passwords
in URLs, ``eval --api-key`` and the environment -- then the hostile-server
table: a server that drips its reply, and one that announces or sends a huge one.
All servers are stubs on loopback addresses.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import warnings
from http.server import ThreadingHTTPServer

import pytest

from barsym.llm import BackendTimeoutError, BackendUnavailableError, LLMError, OpenAIHTTPBackend
from barsym.llm.http.backend import MAX_REPLY_BYTES
from barsym.llm.http.transport import is_loopback
from cli_run import one_line, run
from loopback import ChatStub, JsonHandler

KEY = "sk-test-0123456789"
MESSAGES = [{"role": "user", "content": "Goal: 4 stick"}]
ANSWER = {
    "choices": [{"message": {"role": "assistant", "content": "craft 4 stick: 2 planks"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 5},
}


class Recorder:
    """A chat server on ``host`` that keeps the headers of every request and answers like the API."""

    def __init__(self, host: str = "127.0.0.1"):
        self.requests: list[dict] = []
        recorder = self

        class Handler(JsonHandler):
            def do_GET(self):  # noqa: N802
                recorder.requests.append(dict(self.headers))
                self._send(200, b'{"object": "list", "data": []}')

            def do_POST(self):  # noqa: N802
                recorder.requests.append(dict(self.headers))
                self.read_json()
                self._send(200, json.dumps(ANSWER).encode())

        self.http = ThreadingHTTPServer((host, 0), Handler)
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        self.url = f"http://{host}:{self.port}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


class RawServer:
    """A TCP server on 127.0.0.1 that runs ``serve(connection)`` for each client (for replies no HTTP server sends)."""

    def __init__(self, serve):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()

        def loop():
            while not self.stop.is_set():
                try:
                    connection, _ = self.sock.accept()
                except OSError:
                    return
                threading.Thread(target=self._serve, args=(serve, connection), daemon=True).start()

        threading.Thread(target=loop, daemon=True).start()

    def _serve(self, serve, connection):
        try:
            connection.settimeout(30)
            connection.recv(65536)  # the request (small: one chat message)
            serve(connection, self.stop)
        except OSError:
            pass
        finally:
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture()
def recorder():
    made = []

    def start(host="127.0.0.1"):
        made.append(Recorder(host))
        return made[-1]

    yield start
    for server in made:
        server.close()


# ----------------------------------------------------------------- 2a. redirects


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_stays_home(recorder, code):
    elsewhere = recorder("127.0.0.2")  # another origin on this machine

    class Redirecting(JsonHandler):
        def do_POST(self):  # noqa: N802
            self.send_response(code)
            self.send_header("Location", elsewhere.url + "/v1/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        backend = OpenAIHTTPBackend(f"http://127.0.0.1:{server.server_address[1]}", api_key=KEY, timeout=5)
        with pytest.raises(LLMError) as info:
            backend.complete(MESSAGES)
    finally:
        server.shutdown()
        server.server_close()
    message = str(info.value)
    assert f"HTTP {code} redirecting to {elsewhere.url}/v1/chat/completions" in message
    assert "does not follow redirects" in message and "\n" not in message
    assert elsewhere.requests == []  # nothing reached the other host, key or no key


def test_a_redirecting_server_is_one_line_and_exit_2_on_the_command_line(recorder, capsys):
    elsewhere = recorder("127.0.0.2")

    class Redirecting(JsonHandler):
        def do_GET(self):  # noqa: N802
            self.do_POST()

        def do_POST(self):  # noqa: N802
            self.send_response(302)
            self.send_header("Location", elsewhere.url + "/v1/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        code, out, err = run(
            capsys,
            "plan",
            "stick",
            "--planner",
            "bar",
            "--api-key",
            KEY,
            "--llm-url",
            f"http://127.0.0.1:{server.server_address[1]}",
        )
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2 and one_line(err), err
    assert "HTTP 302 redirecting to http://127.0.0.2" in err and KEY not in err
    assert elsewhere.requests == []


# ----------------------------------------------------------------- 2d. loopback in every spelling


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "0x7f.1",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "127.255.255.254",
        "::1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "::ffff:7f00:1",
        "localhost",
        "LOCALHOST",
        "localhost.",
        "api.localhost",
        "0.0.0.0",
        "[::]",
    ],
)
def test_every_spelling_of_loopback_is_loopback(host):
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host",
    [
        "128.0.0.1",
        "10.0.0.1",
        "1.2.3.4",
        "example.com",
        "127.0.0.1.example.com",
        "localhost.example.com",
        "::2",
        "[::ffff:10.0.0.1]",
        "2147483648",
        "0x80.1",
        "",
    ],
)
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


def test_a_loopback_spelling_never_goes_through_the_proxy(recorder, monkeypatch):
    proxy, model = recorder(), recorder()
    monkeypatch.setenv("http_proxy", proxy.url)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    backend = OpenAIHTTPBackend(f"http://127.1:{model.port}", api_key=KEY, timeout=5)
    assert backend.complete(MESSAGES).text == "craft 4 stick: 2 planks"
    assert proxy.requests == []
    assert model.requests[-1]["Authorization"] == f"Bearer {KEY}"


def test_a_key_over_plain_http_to_another_host_is_warned_about_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            OpenAIHTTPBackend("http://10.255.0.7:8080", api_key=KEY)
        OpenAIHTTPBackend("https://10.255.0.7:8080", api_key=KEY)
        OpenAIHTTPBackend("http://127.1:8080", api_key=KEY)
        OpenAIHTTPBackend("http://10.255.0.8:8080")  # no key, nothing to read on the way
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "over plain http" in said[0] and "10.255.0.7" in said[0]


# ----------------------------------------------------------------- 2e. passwords in URLs


def test_a_password_in_the_url_is_never_echoed():
    backend = OpenAIHTTPBackend("http://me:hunter2@127.0.0.1:9/v1", timeout=2)
    assert "hunter2" not in backend.base_url and "me@" not in backend.base_url
    with pytest.raises(BackendUnavailableError) as info:
        backend.complete(MESSAGES)
    assert "hunter2" not in str(info.value)
    with pytest.raises(ValueError) as bad:
        OpenAIHTTPBackend("http://me:hunter2@127.0.0.1:port/v1")
    assert "hunter2" not in str(bad.value) and "***" in str(bad.value)


def test_a_password_in_the_url_is_sent_as_basic_auth(recorder):
    model = recorder()
    backend = OpenAIHTTPBackend(f"http://me:hunter2@127.0.0.1:{model.port}", timeout=5)
    backend.complete(MESSAGES)
    assert model.requests[-1]["Authorization"] == "Basic bWU6aHVudGVyMg=="  # me:hunter2


def test_the_cli_never_echoes_a_password(capsys):
    code, out, err = run(capsys, "plan", "stick", "--planner", "bar", "--llm-url", "http://me:hunter2@127.0.0.1:9")
    assert code == 2 and one_line(err), err
    assert "hunter2" not in err and "127.0.0.1:9" in err


# ----------------------------------------------------------------- 2c. eval --api-key and the environment


@pytest.fixture()
def tasks_file(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(
        json.dumps(
            [{"task": "stick", "group": "g", "object": "stick"}, {"task": "planks", "group": "g", "object": "planks"}]
        )
    )
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_eval_hands_the_key_to_workers_not_to_the_environment(
    recorder, tasks_file, tmp_path, capsys, monkeypatch, workers
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = recorder()
    run_file = tmp_path / "run.jsonl"
    code, out, err = run(
        capsys,
        "eval",
        "--planner",
        "bar",
        "--dataset",
        tasks_file,
        "--llm-url",
        model.url,
        "--api-key",
        KEY,
        "--workers",
        workers,
        "--run",
        run_file,
    )
    assert code == 0, err
    assert "OPENAI_API_KEY" not in os.environ
    posts = [r for r in model.requests if "Content-Type" in r]
    assert posts and all(r.get("Authorization") == f"Bearer {KEY}" for r in posts)
    assert KEY not in run_file.read_text()


def test_the_source_never_writes_the_key_into_the_environment():
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "barsym"
    writers = [p.name for p in src.rglob("*.py") if 'os.environ["OPENAI_API_KEY"] =' in p.read_text()]
    assert writers == []


# ----------------------------------------------------------------- 7. hostile servers: drips, huge replies


def _drip_body(connection, stop):
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(300):  # 30 s at most: if barsym waited that long, the test fails below, not hangs
        if stop.wait(0.1):
            return
        connection.sendall(b" ")


def _drip_headers(connection, stop):
    for _ in range(300):
        if stop.wait(0.1):
            return
        connection.sendall(b"X")


@pytest.mark.parametrize("drip", [_drip_body, _drip_headers], ids=["body", "headers"])
def test_a_server_that_drips_is_cut_off_at_the_deadline(drip):
    server = RawServer(drip)
    try:
        backend = OpenAIHTTPBackend(server.url, timeout=1)  # each byte comes within 1 s: no read times out
        backend.confirmed = True
        with pytest.raises(BackendTimeoutError, match="no whole reply .* within 1s"):
            backend.complete(MESSAGES)
    finally:
        server.close()


def test_a_dripping_server_is_one_line_on_the_command_line(capsys):
    server = RawServer(_drip_headers)
    try:
        code, out, err = run(capsys, "plan", "stick", "--planner", "bar", "--llm-url", server.url, "--llm-timeout", "1")
    finally:
        server.close()
    assert code == 2 and one_line(err), err
    assert "did not answer within 1s" in err


def _huge_length(connection, stop):
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000000000\r\n\r\n")
    connection.sendall(b"{" * 65536)


def _endless(connection, stop):
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
    chunk = b" " * 65536
    for _ in range(MAX_REPLY_BYTES // len(chunk) + 64):
        if stop.is_set():
            return
        connection.sendall(chunk)


@pytest.mark.parametrize(
    "serve, words",
    [(_huge_length, "a reply of 2000000000 bytes"), (_endless, "a longer reply")],
    ids=["content-length", "no length"],
)
def test_a_huge_reply_is_refused_not_buffered(serve, words):
    server = RawServer(serve)
    try:
        backend = OpenAIHTTPBackend(server.url, timeout=20)
        with pytest.raises(LLMError) as info:
            backend.complete(MESSAGES)
    finally:
        server.close()
    assert words in str(info.value) and "at most 8 MB" in str(info.value)


def test_an_ordinary_reply_still_works():
    stub = ChatStub(lambda messages: "craft 4 stick: 2 planks")
    try:
        assert OpenAIHTTPBackend(stub.url, api_key=KEY, timeout=5).complete(MESSAGES).text == "craft 4 stick: 2 planks"
    finally:
        stub.close()
