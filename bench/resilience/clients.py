"""Slow and abusive clients beside the normal closed-loop load (wrk): `slow_clients` connections that
trickle one header byte every `slow_interval_s` (or go silent after the request line), then three
hostile senders (a method token, a header line and a body of `hostile_bytes` each); the normal load
is measured alone, beside each, and alone again."""

from __future__ import annotations

import select
import selectors
import socket
import statistics
import threading
import time

from .. import load
from .config import MiB
from .sampling import resources
from .scenario import Ctx, wrk_figures

SLOW_HEAD = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _open_slow(port: int, path: str, mode: str) -> socket.socket | None:
    """A connection whose request head has begun: on a fresh connection, after one complete HEAD
    request and its answer ("after a request": a kept-alive connection's next head), or a head that
    stops after its request line ("silent"). None if the server would not take it."""
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        if mode == "after a request":
            s.sendall(b"HEAD %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())
            got = b""
            while b"\r\n\r\n" not in got:
                chunk = s.recv(65536)
                if not chunk:
                    raise OSError("closed after the first request")
                got += chunk
        s.sendall(SLOW_HEAD % path.encode())
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


SLOW_MODES = ("fresh", "after a request", "silent")


def slow_clients(port: int, path: str, n: int, interval: float, cap_s: float, opened: threading.Event) -> dict:
    """n connections that send a request line and then one header byte every `interval` seconds,
    never finishing the head, a third of them each on a fresh connection and after one complete
    request on the same connection (a kept-alive connection's next head); the last third send
    nothing after the request line ("silent": what an idle timeout cuts). Watched until the server
    has closed them all or `cap_s` has passed."""
    sel = selectors.DefaultSelector()
    conns: dict[socket.socket, dict] = {}
    refused = dict.fromkeys(SLOW_MODES, 0)
    for i in range(n):
        mode = SLOW_MODES[i % len(SLOW_MODES)]
        s = _open_slow(port, path, mode)
        if s is None:
            refused[mode] += 1
            continue
        conns[s] = {"mode": mode, "opened": time.time(), "closed": None, "answer": None}
        sel.register(s, selectors.EVENT_READ)
    opened.set()
    t0 = time.time()
    next_byte = t0 + interval
    open_ = set(conns)

    def close(s: socket.socket, answer: str | None) -> None:
        conns[s]["closed"] = time.time()
        conns[s]["answer"] = answer
        open_.discard(s)
        sel.unregister(s)
        s.close()

    while open_ and time.time() < t0 + cap_s:
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            close(s, status_of(data))
        if time.time() >= next_byte:
            next_byte += interval
            for s in list(open_):
                if conns[s]["mode"] == "silent":
                    continue
                try:
                    s.send(b"a")
                except OSError:  # closed: an answer may still be there to read
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    close(s, status_of(data))
    for s in list(open_):
        sel.unregister(s)
        s.close()

    def summary(cs: list[dict], wanted: int, refused: int) -> dict:
        held = sorted(c["closed"] - c["opened"] for c in cs if c["closed"] is not None)
        statuses: dict[str, int] = {}
        for c in cs:
            if c["closed"] is not None:
                k = c["answer"] or "closed without an answer"
                statuses[k] = statuses.get(k, 0) + 1
        return {
            "connections": wanted,
            "refused": refused,
            "closed_by_server": len(held),
            "still_open_at_end": sum(1 for c in cs if c["closed"] is None),
            "held_s_median": statistics.median(held) if held else None,
            "held_s_max": held[-1] if held else None,
            "closed_with": statuses,
        }

    every = summary(list(conns.values()), n, sum(refused.values()))
    every["by_mode"] = {
        m: summary([c for c in conns.values() if c["mode"] == m], len(range(i0, n, len(SLOW_MODES))), refused[m])
        for i0, m in enumerate(SLOW_MODES)
    }
    return every | {"interval_s": interval, "watched_s": cap_s}


def status_of(data: bytes) -> str | None:
    """The status code of an answer's first bytes, or None."""
    if not data.startswith(b"HTTP/"):
        return None
    parts = data.split(b"\r\n", 1)[0].split(b" ")
    return parts[1].decode(errors="replace")[:3] if len(parts) > 1 else None


HOSTILE = {
    # no space ever: the server cannot know a method from a request line
    "method token": (b"", b"A"),
    "header line": (b"GET /city/v1/get?id=3&language=en HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", b"a"),
    "body": (None, b"b"),  # a GET with a Content-Length body of the whole size
}


def hostile(port: int, kind: str, size: int, stall_s: float, chunk: int = 256 * 1024) -> dict:
    """One client sending `size` bytes of one kind as fast as the server takes them. The outcome:
    cut (closed or reset before the end), read all (every byte taken), stalled (the server stopped
    reading and kept the connection for `stall_s`), still reading (after 4 × `stall_s`). Bytes
    counted are what the client wrote; its send buffer is kept small (64 KiB), but the server's
    receive buffer holds some too."""
    head, fill = HOSTILE[kind]
    if head is None:
        head = b"GET /city/v1/get?id=3&language=en HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % size
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    t0 = time.time()
    sent, outcome, status = 0, None, None
    try:
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.sendall(head)
        s.setblocking(False)
        block = fill * chunk
        while sent < size and outcome is None:
            if time.time() > t0 + 4 * stall_s:
                outcome = "still reading"  # slowly: the server takes it, but not at full speed
                break
            r, w = select_rw(s, stall_s)
            if r:
                data = s.recv(65536)
                if not data:
                    outcome = "cut"
                    break
                status = status or status_of(data)
            if not w:
                if not r:
                    outcome = "stalled"
                continue
            try:
                sent += s.send(block[: min(chunk, size - sent)])
            except BlockingIOError:
                continue
        if outcome is None and sent >= size:
            outcome = "read all"
            # whatever answer follows
            r, _ = select_rw(s, stall_s, write=False)
            if r:
                data = s.recv(65536)
                status = status or status_of(data)
    except (ConnectionResetError, BrokenPipeError):
        outcome = "cut"
    except OSError as e:
        outcome = f"error: {e}"
    finally:
        s.close()
    return {"kind": kind, "size": size, "bytes_sent": sent, "outcome": outcome, "status": status, "s": time.time() - t0}


def select_rw(s: socket.socket, timeout: float, write: bool = True) -> tuple[bool, bool]:
    """Whether s is readable and writable within timeout."""
    r, w, _ = select.select([s], [s] if write else [], [], timeout)
    return bool(r), bool(w)


class Background:
    """wrk run in a thread (the normal load beside the slow or hostile clients)."""

    def __init__(self, url: str, connections: int, seconds: float, cpus: str | None, timeout_s: int):
        self.result: dict | None = None
        self.error: str | None = None

        def go() -> None:
            try:
                self.result = load.run_wrk(url, connections, seconds, {}, cpus, timeout_s)
            except Exception as e:  # noqa: BLE001
                self.error = str(e)

        self.thread = threading.Thread(target=go, daemon=True)
        self.thread.start()

    def wait(self) -> dict:
        self.thread.join()
        if self.result is None:
            raise RuntimeError(f"the normal load failed: {self.error}")
        return wrk_figures(self.result)


def slow_and_hostile(ctx: Ctx) -> dict:
    p, cfg = ctx.cfg.profile, ctx.cfg
    ctx.show(f"normal load alone, {p.load_connections} connections, {p.slow_load_s:g} s")
    baseline = wrk_figures(load.run_wrk(ctx.url, p.load_connections, p.slow_load_s, {}, ctx.load_cpus, cfg.timeout_s))
    ctx.show(f"{p.slow_clients} slow-header clients, watched {p.slow_hold_cap_s:g} s, with the normal load")
    opened = threading.Event()
    slow: dict = {}
    t0 = time.time()
    watcher = threading.Thread(
        target=lambda: slow.update(
            slow_clients(
                ctx.port, "/city/v1/get?id=3&language=en", p.slow_clients, p.slow_interval_s, p.slow_hold_cap_s, opened
            )
        ),
        daemon=True,
    )
    watcher.start()
    opened.wait(60)
    with_slow = Background(ctx.url, p.load_connections, p.slow_load_s, ctx.load_cpus, cfg.timeout_s).wait()
    watcher.join()
    slow_resources = resources(ctx.sampler.window(t0, time.time()))
    ctx.show(f"hostile senders ({p.hostile_bytes // MiB} MiB each) with the normal load")
    ctx.running.meter.reset_peak()
    t1 = time.time()
    bg = Background(ctx.url, p.load_connections, p.slow_load_s, ctx.load_cpus, cfg.timeout_s)
    senders = [hostile(ctx.port, kind, p.hostile_bytes, p.hostile_stall_s) for kind in HOSTILE]
    with_hostile = bg.wait()
    peak = ctx.running.meter.sample()
    hostile_resources = resources(ctx.sampler.window(t1, time.time()))
    if peak is not None:
        hostile_resources["usage_peak_bytes"] = peak.memory_peak_bytes
    time.sleep(1)
    # alone again: on the JVM the first measurement may still include compilation
    ctx.show(f"normal load alone again, {p.load_connections} connections, {p.slow_load_s:g} s")
    again = wrk_figures(load.run_wrk(ctx.url, p.load_connections, p.slow_load_s, {}, ctx.load_cpus, cfg.timeout_s))
    return {
        "normal_load": {
            "connections": p.load_connections,
            "seconds": p.slow_load_s,
            "alone": baseline,
            "alone_after": again,
            "with_slow_clients": with_slow,
            "with_hostile_senders": with_hostile,
        },
        "slow_clients": slow | {"resources_max": slow_resources},
        "hostile": {"senders": senders, "resources_max": hostile_resources},
        "alive": bool(ctx.sampler.one().get("alive")),
    }
