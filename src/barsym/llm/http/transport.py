"""The HTTP under the server backend: one opener per server that keeps a key where it belongs, and a deadline.

Why not urllib's defaults: they follow a redirect with the ``Authorization``
header to whatever host the server names, send a request to ``localhost``
through ``$http_proxy`` (key included), bound each socket read rather than the
call (a server that sends a byte a second never times out) and buffer a reply
of any size. :func:`opener_for` never redirects and never proxies a loopback
host; :func:`within` shuts every socket of a call down at its deadline;
:func:`read_capped` stops at a size.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator

__all__ = ["TooLarge", "Watch", "is_loopback", "opener_for", "read_capped", "warn_plain_http", "within"]


def is_loopback(host: str) -> bool:
    """True for every spelling of this machine: ``localhost``, 127.0.0.0/8 as ``inet_aton`` reads it, ::1, ...

    ``127.1``, ``0x7f.1``, ``2130706433`` and ``0177.0.0.1`` all reach 127.0.0.1
    (the C resolver reads IPv4 numbers as ``inet_aton`` does), and so do
    ``::1``, ``[::ffff:127.0.0.1]`` and ``0.0.0.0``: none of them may be sent
    through ``$http_proxy`` (with the key), and none is "a remote host".
    """
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        if not name or any(c not in "0123456789abcdefx." for c in name):
            return False
        try:
            address = ipaddress.ip_address(socket.inet_aton(name))
        except OSError:
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: the ``Authorization`` header would go to whatever host the server names.

    urllib then raises the 3xx as an ``HTTPError``, which the server backend names in one line.
    """

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Watch:
    """The deadline of one call: at ``at`` (monotonic) every socket the call opened is shut down.

    urllib's ``timeout`` bounds each socket operation, so a server that sends a
    byte a second never times out; shutting the socket down ends whatever read
    is waiting, headers or body.
    """

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.expired = False
        self.sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.expire)
        self._timer.daemon = True
        self._timer.start()

    def add(self, sock) -> None:
        with self._lock:
            self.sockets.append(sock)
            if self.expired:
                self._shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self.sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def cancel(self) -> None:
        self._timer.cancel()


class WatchedHTTP(urllib.request.HTTPHandler):
    """Hands each connection's socket to the current call's :class:`Watch` (``watch`` None: no deadline)."""

    watch: Watch | None = None

    def http_open(self, req):
        return self.do_open(watched_connection(http.client.HTTPConnection, self), req)


class WatchedHTTPS(urllib.request.HTTPSHandler):
    watch: Watch | None = None

    def https_open(self, req):
        return self.do_open(watched_connection(http.client.HTTPSConnection, self), req, context=self._context)


def watched_connection(connection: type, handler) -> type:
    class Watched(connection):
        def connect(self):
            super().connect()
            if handler.watch is not None:
                handler.watch.add(self.sock)

    return Watched


@contextlib.contextmanager
def within(opener: urllib.request.OpenerDirector, seconds: float) -> Iterator[Watch]:
    """Every connection ``opener`` makes inside the block is shut down ``seconds`` after it starts.

    Yields the :class:`Watch`; ``watch.expired`` then tells a cut-off reply
    (an empty read, a reset) from a real one. For openers of :func:`opener_for`.
    """
    watch = Watch(seconds)
    handlers = [h for h in opener.handlers if isinstance(h, (WatchedHTTP, WatchedHTTPS))]
    for handler in handlers:
        handler.watch = watch
    try:
        yield watch
    finally:
        watch.cancel()
        for handler in handlers:
            handler.watch = None


def opener_for(host: str | None) -> urllib.request.OpenerDirector:
    """An opener for a server on ``host``: never follows a redirect; a loopback host never goes via $http_proxy."""
    handlers = [urllib.request.ProxyHandler({})] if is_loopback(host or "") else []
    return urllib.request.build_opener(*handlers, NoRedirect, WatchedHTTP(), WatchedHTTPS())


def read_capped(response, limit: int) -> bytes:
    """The body, or LLMError when it is (or says it will be) over ``limit`` bytes: never buffered whole."""
    declared = response.headers.get("Content-Length") if getattr(response, "headers", None) else None
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise TooLarge(int(declared))
    chunks, size = [], 0
    while True:
        chunk = response.read(min(65536, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise TooLarge(None)


class TooLarge(Exception):
    def __init__(self, declared: int | None):
        super().__init__(declared)
        self.declared = declared


_warned_plain_http: set[str] = set()


def warn_plain_http(url: str, host: str) -> None:
    """Once per server: a key sent over plain http to another machine can be read on the way."""
    if url in _warned_plain_http:
        return
    _warned_plain_http.add(url)
    warnings.warn(
        f"the API key goes to {host} over plain http, unencrypted: anyone on the way can read it; "
        f"use https:// for a server on another machine",
        RuntimeWarning,
        stacklevel=4,
    )
