"""A raw HTTP/1.1 client: the request target goes on the wire byte for byte, nothing re-encoded.

One connection per request (``Connection: close``). The response is parsed strictly enough to
compare bytes: status, headers in order (names as sent), and the body framed by Content-Length or
chunked encoding (or the connection close). For HEAD no body is expected; any byte that arrives
after the headers is kept in ``extra`` so a check can complain about it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import selectors
import socket
import time

CRLF = b"\r\n"


@dataclasses.dataclass
class Response:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    elapsed: float = 0.0
    extra: bytes = b""  # bytes after the framed body (a HEAD body, say)
    raw_head: bytes = b""

    def header(self, name: str) -> str | None:
        """First value of a header (case-insensitive name), or None."""
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    @property
    def content_type(self) -> str | None:
        return self.header("Content-Type")


class HttpError(Exception):
    """No parseable HTTP response (connection refused, reset, timeout, garbage)."""


def build_request(
    method: str, target: bytes | str, host: str, headers: list[tuple[str, str]] | None = None, body: bytes | None = None
) -> bytes:
    """The exact bytes sent. ``target`` must be ASCII (percent-encode anything else)."""
    if isinstance(target, str):
        target = target.encode("ascii")
    if any(b <= 0x20 or b >= 0x7F for b in target):
        raise ValueError(f"request target must be visible ASCII: {target[:80]!r}")
    lines = [method.encode("ascii") + b" " + target + b" HTTP/1.1", b"Host: " + host.encode("ascii")]
    names = set()
    for k, v in headers or []:
        lines.append(f"{k}: {v}".encode("latin-1"))
        names.add(k.lower())
    if "connection" not in names:
        lines.append(b"Connection: close")
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return CRLF.join(lines) + CRLF + CRLF + (body or b"")


def parse_head(head: bytes) -> tuple[int, str, list[tuple[str, str]]]:
    lines = head.split(CRLF)
    parts = lines[0].decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpError(f"bad status line: {lines[0][:200]!r}")
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        if b":" not in line:
            raise HttpError(f"bad header line: {line[:200]!r}")
        k, v = line.split(b":", 1)
        headers.append((k.decode("latin-1").strip(), v.decode("latin-1").strip()))
    return int(parts[1]), parts[2] if len(parts) > 2 else "", headers


def decode_chunked(data: bytes) -> tuple[bytes, bytes] | None:
    """(body, rest) for a complete chunked payload, None if incomplete."""
    body, pos = bytearray(), 0
    while True:
        end = data.find(CRLF, pos)
        if end < 0:
            return None
        size_text = data[pos:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HttpError(f"bad chunk size {size_text[:40]!r}") from None
        pos = end + 2
        if size == 0:
            # trailers until an empty line
            while True:
                end = data.find(CRLF, pos)
                if end < 0:
                    return None
                if end == pos:
                    return bytes(body), data[end + 2 :]
                pos = end + 2
        if len(data) < pos + size + 2:
            return None
        body += data[pos : pos + size]
        pos += size + 2


def parse_response(data: bytes, method: str, eof: bool) -> Response | None:
    """A Response from the bytes received so far; None if more bytes are needed."""
    sep = data.find(CRLF + CRLF)
    if sep < 0:
        if eof:
            raise HttpError(f"connection closed before the end of the headers: {data[:200]!r}")
        return None
    head, rest = data[:sep], data[sep + 4 :]
    status, reason, headers = parse_head(head)
    resp = Response(status, reason, headers, b"", raw_head=head)
    if method.upper() == "HEAD" or status in (204, 304) or 100 <= status < 200:
        resp.extra = rest
        return resp if eof else None
    te = resp.header("Transfer-Encoding")
    if te and "chunked" in te.lower():
        decoded = decode_chunked(rest)
        if decoded is None:
            if eof:
                raise HttpError("connection closed inside a chunked body")
            return None
        resp.body, resp.extra = decoded
        return resp if eof else None
    cl = resp.header("Content-Length")
    if cl is not None:
        try:
            n = int(cl)
        except ValueError:
            raise HttpError(f"bad Content-Length {cl!r}") from None
        if len(rest) < n:
            if eof:
                raise HttpError(f"connection closed after {len(rest)} of {n} body bytes")
            return None
        resp.body, resp.extra = rest[:n], rest[n:]
        return resp if eof else None
    if not eof:
        return None
    resp.body = rest
    return resp


def framed_complete(data: bytes, method: str) -> bool:
    """True once the headers and a length-framed (or bodiless) response have all arrived."""
    sep = data.find(CRLF + CRLF)
    if sep < 0:
        return False
    try:
        status, _, headers = parse_head(data[:sep])
    except HttpError:
        return False
    rest = data[sep + 4 :]
    if method.upper() == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return True
    lower = {k.lower(): v for k, v in headers}
    if "chunked" in lower.get("transfer-encoding", "").lower():
        try:
            return decode_chunked(rest) is not None
        except HttpError:
            return True
    if "content-length" in lower:
        try:
            return len(rest) >= int(lower["content-length"])
        except ValueError:
            return True
    return False


def request(
    base: tuple[str, int],
    method: str,
    target: bytes | str,
    headers=None,
    body: bytes | None = None,
    timeout: float = 10.0,
    linger: float = 0.1,
) -> Response:
    """Sends one request on a new connection and reads the answer.

    Reads until the server closes the connection (we asked it to); once the framed response is
    complete, waits at most ``linger`` seconds for the close, so a server that keeps the
    connection open costs little and one that sends more bytes (a HEAD body) is caught.
    """
    host, port = base
    data = build_request(method, target, f"{host}:{port}", headers, body)
    t0 = time.monotonic()
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        raise HttpError(f"connect to {host}:{port} failed: {e}") from None
    buf = bytearray()
    try:
        sock.settimeout(timeout)
        # the server may answer (414) and close before reading everything; read what it said
        with contextlib.suppress(OSError):
            sock.sendall(data)
        complete_at, reset = None, False
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                if complete_at is not None:
                    break
                raise HttpError(
                    f"timeout after {timeout}s waiting for the response; got {bytes(buf[:200])!r}"
                ) from None
            except ConnectionResetError:
                reset = True
                break
            if not chunk:
                break
            buf += chunk
            if complete_at is None and framed_complete(bytes(buf), method):
                complete_at = time.monotonic()
                if linger <= 0:
                    break
                sock.settimeout(linger)
        elapsed = (complete_at or time.monotonic()) - t0
    finally:
        sock.close()
    try:
        resp = parse_response(bytes(buf), method, eof=True)
    except HttpError as e:
        raise HttpError(f"{e} (connection reset by the server)" if reset else str(e)) from None
    resp.elapsed = elapsed
    return resp


def concurrent(
    base: tuple[str, int], method: str, target: bytes | str, n: int, timeout: float
) -> list[tuple[float, Response | None, str | None]]:
    """``n`` requests at once, each on its own connection, from one thread (non-blocking sockets
    and one selector, so no client thread waits for the interpreter): for each, the seconds from
    sending it (once its connection is up) to its complete answer, and the Response or an error."""
    host, port = base
    data = build_request(method, target, f"{host}:{port}", None, None)
    sel = selectors.DefaultSelector()
    sent: dict[int, float] = {}
    bufs: dict[int, bytearray] = {}
    results: list[tuple[float, Response | None, str | None] | None] = [None] * n

    def finish(i: int, sock: socket.socket, resp: Response | None, error: str | None) -> None:
        sel.unregister(sock)
        sock.close()
        results[i] = (time.monotonic() - sent.get(i, time.monotonic()), resp, error)

    for i in range(n):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex((host, port))
        sel.register(sock, selectors.EVENT_WRITE, i)
        bufs[i] = bytearray()
    deadline = time.monotonic() + timeout
    while sel.get_map() and time.monotonic() < deadline:
        for key, events in sel.select(timeout=0.05):
            i, sock = key.data, key.fileobj
            if events & selectors.EVENT_WRITE:
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    finish(i, sock, None, f"connect failed: {os.strerror(err)}")
                    continue
                sock.sendall(data)  # a few dozen bytes: the socket buffer takes them at once
                sent[i] = time.monotonic()
                sel.modify(sock, selectors.EVENT_READ, i)
                continue
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            bufs[i] += chunk
            if chunk and not framed_complete(bytes(bufs[i]), method):
                continue
            try:
                finish(i, sock, parse_response(bytes(bufs[i]), method, eof=True), None)
            except HttpError as e:
                finish(i, sock, None, str(e))
    for key in list(sel.get_map().values()):
        finish(key.data, key.fileobj, None, f"no answer within {timeout}s")
    sel.close()
    return results  # type: ignore[return-value]


def split_url(url: str) -> tuple[str, int]:
    """('127.0.0.1', 8080) from 'http://127.0.0.1:8080' (plain HTTP only)."""
    if not url.startswith("http://"):
        raise ValueError(f"only http:// base URLs are supported: {url}")
    hostport = url[len("http://") :].rstrip("/")
    if "/" in hostport:
        raise ValueError(f"a base URL has no path: {url}")
    host, _, port = hostport.rpartition(":")
    if not host:
        return hostport, 80
    return host.strip("[]"), int(port)
