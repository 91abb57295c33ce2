"""A JSON HTTP server on a free 127.0.0.1 port, in a thread, for tests of barsym's HTTP backend.

Tests subclass :class:`JsonHandler` with the answers they need (a stub model,
a server that is not OpenAI-compatible) and run it with :class:`Loopback`.
"""

from __future__ import annotations

import json
import threading
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
