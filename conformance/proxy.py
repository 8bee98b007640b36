"""A recording, fault-injecting HTTP proxy placed between a service and Elasticsearch.

The service is started with ``ELASTICSEARCH_URL`` pointing here. Every request is recorded
(method, target, headers, body) together with what was relayed back (status, decoded body).
Modes, switchable at any time with :meth:`Proxy.set_mode`:

``pass``      forward to Elasticsearch and relay the answer (default)
``hold``      keep the request unanswered until the mode changes, then handle it in the new mode
              (so "hang, then release" lets a held request complete normally)
``delay``     keep each request unanswered for ``delay_s`` from its arrival, then forward it (a slow
              upstream); a request whose service gave up meanwhile is dropped
``status``    answer with a fixed status, body and content type (503, 429, a broken 200, ...)
``reset``     read the request, then reset the connection (RST) without answering
``refuse``    listener closed and open connections shut: new connections are refused
              (:meth:`Proxy.refuse` / :meth:`Proxy.restore`)

A fault can be limited to some requests with ``match`` (a predicate on the recorded request);
requests that do not match are passed through. ``Proxy(url, record=False)`` keeps no record (for
long runs under load, where the record would only grow).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import http.client
import http.server
import select
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable
from urllib.parse import urlsplit

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
}


@dataclasses.dataclass
class Exchange:
    t: float
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    mode: str = ""
    status: int | None = None  # status relayed to the service (None: no answer)
    response_body: bytes = b""  # relayed body, decompressed
    relayed: bool = False  # True when the answer came from Elasticsearch
    ended: float | None = None  # when it was answered, or the service gave up on it

    def mentions(self, text: str) -> bool:
        return text in self.target or text.encode() in self.body


def decode_body(body: bytes, encoding: str | None) -> bytes:
    enc = (encoding or "").lower().strip()
    try:
        if enc == "gzip":
            return gzip.decompress(body)
        if enc == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:
                return zlib.decompress(body, -zlib.MAX_WBITS)
    except (OSError, zlib.error, EOFError):
        return body
    return body


Match = Callable[[Exchange], bool]


def _peer_closed(conn: socket.socket) -> bool:
    """True when the other side closed or reset the connection (nothing is consumed)."""
    try:
        if not select.select([conn], [], [], 0)[0]:
            return False
        return conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


@dataclasses.dataclass
class Mode:
    name: str = "pass"
    status: int = 0
    body: bytes = b""
    content_type: str = "application/json"
    match: Match | None = None
    delay_s: float = 0.0

    def applies(self, ex: Exchange) -> bool:
        return self.name == "pass" or self.match is None or self.match(ex)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # many concurrent service connections (the in-flight bound check)
    proxy: Proxy

    def handle_error(self, request, client_address):  # a service dropping a connection is not news
        pass


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        # headers and body go out in two writes: without this, Nagle holds the body for the
        # service's delayed ACK (40 ms per answer under load)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.proxy._track(self.connection, True)
        self._upstream: http.client.HTTPConnection | None = None

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.proxy._track(self.connection, False)
            if self._upstream is not None:
                self._upstream.close()

    def _read_body(self) -> bytes:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self):
        proxy = self.server.proxy
        body = self._read_body()
        ex = Exchange(time.monotonic(), self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        proxy._record(ex)
        try:
            self._handle_recorded(ex, body)
        finally:
            ex.ended = time.monotonic()

    def _handle_recorded(self, ex: Exchange, body: bytes):
        proxy = self.server.proxy
        mode = proxy._mode_for(ex)
        while mode.name == "hold":
            ex.mode = "hold"
            mode = proxy._wait_release(ex, self.connection)
            if mode is None:  # proxy closing, or the service closed the connection
                self.close_connection = True
                return
        if mode.name == "delay":
            ex.mode = "delay"
            if not proxy._wait_until(ex.t + mode.delay_s, self.connection):
                self.close_connection = True
                return
            mode = Mode()
        ex.mode = mode.name
        if mode.name == "pass":
            self._forward(ex, body)
        elif mode.name == "status":
            ex.status, ex.response_body = mode.status, mode.body
            self._answer(
                mode.status, [("Content-Type", mode.content_type), ("X-elastic-product", "Elasticsearch")], mode.body
            )
        elif mode.name in ("reset", "refuse"):
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        else:
            raise AssertionError(mode.name)

    def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes):
        try:
            self.send_response_only(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _forward(self, ex: Exchange, body: bytes):
        proxy = self.server.proxy
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP and k.lower() != "host"}
        headers["Host"] = f"{proxy.upstream_host}:{proxy.upstream_port}"
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        for attempt in (1, 2):
            if self._upstream is None:
                self._upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=30)
            try:
                if self._upstream.sock is None:
                    self._upstream.connect()
                    self._upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._upstream.request(self.command, self.path, body=body or None, headers=headers)
                resp = self._upstream.getresponse()
                data = resp.read()
                break
            except (OSError, http.client.HTTPException):
                self._upstream.close()
                self._upstream = None
                if attempt == 2:
                    ex.status = None
                    self.close_connection = True
                    self.connection.close()
                    return
        out = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
        ex.status, ex.response_body, ex.relayed = (
            resp.status,
            decode_body(data, resp.getheader("Content-Encoding")),
            True,
        )
        self._answer(resp.status, out, data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _handle


class Proxy:
    """``with Proxy(es_url) as p: ... p.url ...``"""

    def __init__(self, upstream_url: str, host: str = "127.0.0.1", record: bool = True):
        u = urlsplit(upstream_url)
        self.record = record
        self.upstream_host, self.upstream_port = u.hostname or "127.0.0.1", u.port or 80
        self.host = host
        self.port = 0
        self.exchanges: list[Exchange] = []
        self._lock = threading.Condition()
        self._mode = Mode()
        self._conns: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._closing = False

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> Proxy:
        self._listen()
        return self

    def _listen(self):
        server = _Server((self.host, self.port), _Handler)
        server.proxy = self
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"proxy-{self.port}", daemon=True
        )
        self._thread.start()

    def _unlisten(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)

    def close(self):
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        self._unlisten()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # modes ---------------------------------------------------------------------------------
    def set_mode(
        self,
        name: str,
        status: int = 0,
        body: bytes = b"",
        content_type: str = "application/json",
        match: Match | None = None,
        delay_s: float = 0.0,
    ):
        assert name in ("pass", "hold", "status", "reset", "delay"), name
        with self._lock:
            self._mode = Mode(name, status, body, content_type, match, delay_s)
            self._lock.notify_all()

    def refuse(self):
        """Close the listener and every open connection: connects are refused until restore(). A
        connection accepted just before the listener closed (its handler not yet tracked) is reset
        at its next request, so that nothing is relayed until restore()."""
        with self._lock:
            self._mode = Mode("refuse")
            self._lock.notify_all()
        self._unlisten()

    def restore(self):
        """Listen again on the same port, in pass mode."""
        self.set_mode("pass")
        if self._server is None:
            self._listen()

    # recording -----------------------------------------------------------------------------
    def _track(self, conn: socket.socket, add: bool):
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _record(self, ex: Exchange):
        if not self.record:
            return
        with self._lock:
            self.exchanges.append(ex)
            self._lock.notify_all()

    def _mode_for(self, ex: Exchange) -> Mode:
        with self._lock:
            return self._mode if self._mode.applies(ex) else Mode()

    def _wait(self, done: Callable[[], object], conn: socket.socket, deadline: float | None = None) -> object:
        """What `done()` (called under the lock) returns once it is not None, checked at every mode
        change and every 50 ms until `deadline`; None when the proxy closes or the service gives up
        (closes its connection) first."""
        while True:
            with self._lock:
                if self._closing:
                    return None
                result = done()
                if result is not None:
                    return result
                left = 0.05 if deadline is None else min(deadline - time.monotonic(), 0.05)
                self._lock.wait(max(left, 0.0))
            if _peer_closed(conn):
                return None

    def _wait_release(self, ex: Exchange, conn: socket.socket) -> Mode | None:
        """The mode that ends a hold; None when the proxy closes or the service gives up (closes)."""

        def released() -> Mode | None:
            mode = self._mode if self._mode.applies(ex) else Mode()
            return None if mode.name == "hold" else mode

        return self._wait(released, conn)

    def _wait_until(self, deadline: float, conn: socket.socket) -> bool:
        """Sleep until the monotonic deadline; False when the proxy closes or the service gives up first."""
        return self._wait(lambda: True if time.monotonic() >= deadline else None, conn, deadline) is not None

    def max_in_flight(self, mark: int) -> int:
        """The most requests since ``mark`` that were open (unanswered, not given up) at one time."""
        exchanges = self.since(mark)
        return max(
            (sum(1 for e in exchanges if e.t <= x.t and (e.ended is None or e.ended > x.t)) for x in exchanges),
            default=0,
        )

    def mark(self) -> int:
        """An index into the record; pass it to since()."""
        with self._lock:
            return len(self.exchanges)

    def since(self, mark: int) -> list[Exchange]:
        with self._lock:
            return list(self.exchanges[mark:])

    def wait_for(self, predicate: Callable[[list[Exchange]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self.exchanges):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.1))
            return True
