"""A JSON HTTP server on a free 127.0.0.1 port, in a thread, for tests of barsym's HTTP backend.

Tests subclass :class:`JsonHandler` with the answers they need and run it with
:class:`Loopback`; :class:`ChatStub` is the stub model most of them need (also
one answering any status, for servers that are not OpenAI-compatible).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    def read_json(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout): nothing to answer
            pass

    def log_message(self, *args):  # keep test output clean
        pass


class Loopback:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


class ChatStub:
    """A stub model server: GET answers 200, each chat POST gets ``reply(messages)`` as the assistant's text.

    ``reply`` may return bytes to send a raw body instead; ``hang`` holds every
    POST (up to 10 s, or until :meth:`close`) to let a client time out.

    For servers that answer with other statuses, ``status`` replaces ``reply``:
    the n-th POST (from 1) gets ``status(n, messages) -> (HTTP status, body)``,
    a 501 sent the way http.server refuses a method it does not have. ``get``
    False leaves GET unimplemented too (http.server then answers 501, as it
    does to POST), so barsym's start-up probe sees the same as a first call.
    """

    def __init__(
        self,
        reply: Callable[[list], str | bytes] | None = None,
        hang: bool = False,
        *,
        status: Callable[[int, list], tuple[int, bytes]] | None = None,
        get: bool = True,
    ):
        if (reply is None) == (status is None):
            raise ValueError("give reply or status")
        self.release = threading.Event()
        self.posts = 0
        stub = self

        class Handler(JsonHandler):
            if get:

                def do_GET(self):  # noqa: N802
                    self._send(200, b'{"object": "list", "data": []}')

            def do_POST(self):  # noqa: N802
                body = self.read_json()
                stub.posts += 1
                if hang:
                    stub.release.wait(10)
                if status is not None:
                    code, data = status(stub.posts, body.get("messages", []))
                    if code == 501:
                        return self.send_error(501, "Unsupported method ('POST')")
                    return self._send(code, data)
                text = reply(body["messages"])
                if isinstance(text, bytes):
                    return self._send(200, text)
                answer = {
                    "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 400, "completion_tokens": 9},
                }
                self._send(200, json.dumps(answer).encode())

        self.loopback = Loopback(Handler)
        self.url = self.loopback.url

    def close(self) -> None:
        self.release.set()
        self.loopback.close()


@contextmanager
def chat_stubs() -> Iterator[Callable[..., ChatStub]]:
    """``start(reply, hang=False)`` makes a :class:`ChatStub`; all of them are closed on exit.

    ``reply`` is the assistant's text, or a function of the messages giving it.
    The body of the stub-server fixtures of the CLI tests.
    """
    made: list[ChatStub] = []

    def start(reply, hang: bool = False) -> ChatStub:
        made.append(ChatStub(reply if callable(reply) else (lambda _: reply), hang))
        return made[-1]

    try:
        yield start
    finally:
        for stub in made:
            stub.close()
