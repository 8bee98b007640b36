"""Resilience: how each target fails, holds up and recovers under load (`python -m bench resilience`).

Every target (each service bare and as its image, under the benchmark's limits and placement) goes
through four scenarios, each bounded in time, all traffic on 127.0.0.1:

1. upstream outage under load: the suite's faulting proxy (conformance/proxy.py) in front of
   Elasticsearch refuses every connection for `fault_s`, at each of `outage_connections`;
2. slow upstream: the proxy holds every Elasticsearch request for twice ELASTICSEARCH_TIMEOUT_MS
   for `fault_s`, under the normal load;
3. slow and abusive clients beside a normal closed-loop load at `load_connections`: `slow_clients`
   connections that trickle one header byte every `slow_interval_s`, then three hostile senders
   (a method token, a header line and a body of `hostile_bytes` each);
4. soak: `soak_connections` for `soak_minutes` slices of `soak_slice_s`, drift first → last slice.

The outage and slow-upstream scenarios need per-request timing (what answered when), so their
load is vegeta in a closed loop (`-rate=0 -max-workers=N`: N workers, each sending its next
request when the last one is answered) with per-request results; the others use wrk like the main
run. Memory is the working set (cgroup usage minus inactive file cache, what Kubernetes evicts
by), sampled with the open file descriptors and threads every `sample_s` by a thread of the harness.

Before the first phase each target warms up at the normal load until its CPU per request has
stopped moving, by the main run's rule (bench/warmup.py: windows of `warm_window_s`, at most
`warm_cap_s`), so that the normal load it serves beside the slow clients is its steady state, not
its JIT's warm-up; the record keeps the windows and whether it settled.

A target that dies is a finding: each entry of `died` keeps its evidence (bench/targets.py,
`death_evidence`: exit code, the kernel's OOM verdict, its log's last lines), read before it is stopped.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
import os
import select
import selectors
import signal
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance.proxy import Proxy

from . import load, placement, runner, warmup
from .metrics import step_metrics
from .targets import CgroupMeter, Env, Running, Target, death_words

SCHEMA = "cityref-bench-resilience/1"
TIMEOUT_MS = 2000  # the contract's default ELASTICSEARCH_TIMEOUT_MS, which every target runs with
RECOVERED = 0.99  # "recovered" = from here on at least 99 % of the answers are 200s
MiB = 2**20


@dataclass
class Profile:
    name: str
    warm_s: float  # load at load_connections before the first phase, a third of it before the second
    load_connections: int  # the normal closed-loop load
    outage_connections: list[int]
    before_s: float  # load before a fault
    fault_s: float  # how long the fault lasts
    after_s: float  # load after it: the recovery is looked for in this window
    slow_clients: int
    slow_interval_s: float  # one header byte per slow connection every this many seconds
    slow_hold_cap_s: float  # how long the slow connections are watched
    slow_load_s: float  # each normal-load measurement of the slow-client scenario
    hostile_bytes: int
    hostile_stall_s: float  # a sender that cannot write for this long: the server stopped reading
    soak_connections: int
    soak_minutes: int  # slices
    soak_slice_s: float = 60.0
    sample_s: float = 0.5
    # Phase 1's warm-up: windows of warm_window_s until stable (bench/warmup.py), at most warm_cap_s;
    # 0: warm_s of load, as before a phase through the proxy
    warm_cap_s: float = 0.0
    warm_window_s: float = 5.0


PROFILES = {
    "quick": Profile("quick", 15, 64, [64, 2048], 3, 10, 5, 512, 2, 35, 5, 64 * MiB, 5, 2048, 2, warm_cap_s=90),
    "full": Profile("full", 30, 64, [64, 2048], 5, 10, 10, 512, 2, 120, 10, 64 * MiB, 10, 2048, 10, warm_cap_s=120),
    # make test: one service, seconds per scenario, so that the code keeps working
    "smoke": Profile("smoke", 1, 8, [16], 1, 2, 2, 16, 0.5, 3, 1, 4 * MiB, 2, 64, 2, 2.0, 0.25),
}


# -- sampling -------------------------------------------------------------------------------------


class Sampler:
    """Working set, raw usage, open fds and threads of the target's cgroup, every `period` seconds."""

    def __init__(self, running: Running, period: float):
        self.group = running.meter.group if isinstance(running.meter, CgroupMeter) else None
        self.period = period
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="resilience-sampler", daemon=True)

    def one(self) -> dict:
        t = time.time()
        if self.group is None:
            return {"t": t, "alive": None}
        try:
            s = self.group.sample()
            pids = self.group.pids()
            fds = threads = 0
            for pid in pids:
                with contextlib.suppress(OSError):
                    fds += len(os.listdir(f"/proc/{pid}/fd"))
                with contextlib.suppress(OSError, ValueError, IndexError):
                    status = Path(f"/proc/{pid}/status").read_text()
                    threads += int(status.split("Threads:")[1].split()[0])
            return {
                "t": t,
                "alive": bool(pids),
                "working_set_bytes": self.group.working_set(s.memory_bytes),
                "usage_bytes": s.memory_bytes,
                "fds": fds,
                "threads": threads,
                "oom_kills": s.oom_kills,
            }
        except OSError:  # the group is gone: the target died (a container's group goes with it)
            return {"t": t, "alive": False}

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.samples.append(self.one())

    def __enter__(self) -> Sampler:
        self.samples.append(self.one())
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(self.one())

    def window(self, t0: float, t1: float) -> list[dict]:
        return [s for s in self.samples if t0 <= s["t"] <= t1 and s.get("alive")]


def resources(samples: list[dict], fn=max) -> dict:
    """One figure per resource over samples (max by default), None where nothing was measured."""
    out = {}
    for key in ("working_set_bytes", "usage_bytes", "fds", "threads"):
        vals = [s[key] for s in samples if s.get(key) is not None]
        out[key] = fn(vals) if vals else None
    return out


def last(samples: list[dict], t: float) -> list[dict]:
    """The last sample at or before t, as a list (empty if none)."""
    before = [s for s in samples if s["t"] <= t and s.get("alive")]
    return before[-1:]


# -- per-request timelines (vegeta) ---------------------------------------------------------------


@dataclass
class Row:
    sent: float  # unix seconds
    done: float
    code: int  # 0 = no answer (socket error or timeout)
    error: str


def parse_rows(csv_text: str) -> list[Row]:
    out = []
    for r in csv.reader(io.StringIO(csv_text)):
        if len(r) < 6:
            continue
        sent = int(r[0]) / 1e9
        out.append(Row(sent, sent + int(r[2]) / 1e9, int(r[1]), r[5]))
    return out


def timeline_load(
    vegeta: str,
    url: str,
    workers: int,
    seconds: float,
    cpus: str | None,
    workdir: Path,
    timeout_s: int,
    events: list[tuple[float, str, Callable[[], object]]],
) -> tuple[list[Row], dict[str, float]]:
    """A closed loop of `workers` for `seconds`; `events` are (offset s, name, action) run on the way.
    Returns every request and, per event, the wall times (unix s) its action began and ended."""
    targets = workdir / "resilience-targets.txt"
    targets.write_text(f"GET {url}\n")
    results = workdir / "resilience-results.bin"
    pin = ["taskset", "-c", cpus] if cpus else []
    argv = pin + [
        vegeta,
        "attack",
        "-rate=0",
        f"-max-workers={workers}",
        f"-workers={workers}",
        f"-duration={seconds:g}s",
        f"-timeout={timeout_s}s",
        f"-targets={targets}",
        "-keepalive=true",
    ]
    marks: dict[str, tuple[float, float]] = {}
    with results.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out)
        t0 = time.time()
        try:
            for offset, name, action in events:
                time.sleep(max(0.0, t0 + offset - time.time()))
                began = time.time()
                action()
                marks[name] = (began, time.time())
            proc.wait(timeout=seconds + timeout_s + 30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    enc = subprocess.run([vegeta, "encode", "--to", "csv", str(results)], capture_output=True, text=True, check=True)
    results.unlink()
    return parse_rows(enc.stdout), marks


def answers(rows: list[Row]) -> dict:
    """Status counts, socket errors apart, and latency percentiles of these requests."""
    by_status: dict[str, int] = {}
    socket_errors: dict[str, int] = {}
    for r in rows:
        if r.code:
            by_status[str(r.code)] = by_status.get(str(r.code), 0) + 1
        else:
            # "Get \"http://…\": dial tcp …: connect: connection refused" -> "connect: connection refused"
            why = r.error.rsplit(": ", 2)[-2:] if r.error else ["?"]
            key = ": ".join(why)[:80]
            socket_errors[key] = socket_errors.get(key, 0) + 1
    lat = sorted((r.done - r.sent) * 1000 for r in rows)
    return {
        "requests": len(rows),
        "by_status": dict(sorted(by_status.items())),
        "socket_errors": sum(socket_errors.values()),
        "socket_errors_detail": socket_errors,
        "p50_ms": load.percentile(lat, 50) if lat else None,
        "p99_ms": load.percentile(lat, 99) if lat else None,
        "max_ms": lat[-1] if lat else None,
    }


def recovery_s(rows: list[Row], t_return: float, ok_ratio: float = RECOVERED, bin_s: float = 0.1) -> float | None:
    """Seconds from the upstream's return until the answers are 200s again: answers are binned by
    completion time in `bin_s` bins from the return; the recovery ends with the last bin whose answers
    are less than `ok_ratio` 200s (0 when there is none). None: the last bin is still bad (not
    recovered within the run). Independent of how long the run goes on after recovering."""
    bins: dict[int, list[int]] = {}
    for r in rows:
        if r.done >= t_return:
            b = bins.setdefault(int((r.done - t_return) / bin_s), [0, 0])
            b[0] += r.code == 200
            b[1] += 1
    if not bins:
        return None
    bad = [i for i, (ok, n) in bins.items() if ok / n < ok_ratio]
    if not bad:
        return 0.0
    if max(bad) == max(bins):
        return None
    return (max(bad) + 1) * bin_s


def fault_figures(rows: list[Row], marks: dict, sampler: Sampler, t_start: float, t_end: float) -> dict:
    """Requests by when they were sent and answered: answered before the fault began to be set; sent
    before it and answered after (in flight when it began); sent while it was fully in force (from the
    end of its setting to the start of its removal); sent after it was removed."""
    on_began, on = marks["fault_on"]
    off_began, off = marks["fault_off"]
    before = [r for r in rows if r.done < on_began]
    in_flight = [r for r in rows if r.sent < on_began <= r.done]
    during = [r for r in rows if on <= r.sent < off_began]
    after = [r for r in rows if r.sent >= off]
    return {
        "fault_s": off_began - on,
        "before": answers(before),
        "in_flight": answers(in_flight),
        # latency: every request sent during the fault, also those answered after it ended
        "during": answers(during),
        # statuses: those answered while the fault lasted (the contract's 503 or 504) and those that
        # waited (for a permit, in a queue) past its end and were answered after it (a 200 is right)
        "during_answered": answers([r for r in during if r.done < off_began]),
        "during_answered_after": answers([r for r in during if r.done >= off_began]),
        "after": answers(after),
        "recovery_s": recovery_s(rows, off),
        "observed_after_s": max((r.done for r in rows), default=off) - off,
        "resources": {
            "before": resources(last(sampler.samples, on)),
            "during_max": resources(sampler.window(on, off)),
            "after": resources(last(sampler.samples, t_end)),
        },
    }


# -- slow and hostile clients ---------------------------------------------------------------------


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


def wrk_figures(m: dict) -> dict:
    return {
        "rps": m["successes"] / m["duration_s"] if m["duration_s"] else None,
        "errors": m["status_errors"] + m["socket_errors"],
        "p99_ms": m["latency_ms"]["p99"],
    }


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


# -- the scenarios --------------------------------------------------------------------------------


@dataclass
class Ctx:
    cfg: Config
    running: Running
    sampler: Sampler
    load_cpus: str | None
    workdir: Path
    show: Callable[[str], None]

    @property
    def url(self) -> str:
        return self.running.url + self.running.path % self.cfg.city_id

    @property
    def port(self) -> int:
        return int(self.running.url.rsplit(":", 1)[1])


def warm(ctx: Ctx, share: float = 1.0) -> dict:
    """`share` of the profile's warm-up at the normal load."""
    p = ctx.cfg.profile
    seconds = max(1.0, p.warm_s * share)
    ctx.show(f"warm-up, {p.load_connections} connections, {seconds:g} s")
    m = load.run_wrk(ctx.url, p.load_connections, seconds, {}, ctx.load_cpus, ctx.cfg.timeout_s)
    if m["successes"] == 0:
        raise RuntimeError("the warm-up got no successful answer")
    return wrk_figures(m)


def warm_until_stable(ctx: Ctx) -> dict:
    """Phase 1's warm-up: windows of the normal load until the CPU per request is stable (the main
    run's rule and tolerance), at most `warm_cap_s`: the warm-up record (bench/warmup.py) with each
    window's req/s. The fixed `warm` when the profile has no cap or the cgroup gives no CPU figures."""
    p = ctx.cfg.profile
    if not p.warm_cap_s or not isinstance(ctx.running.meter, CgroupMeter):
        return warm(ctx)
    rule = warmup.Rule(p.load_connections, p.warm_window_s, p.warm_cap_s, runner.Profile.stable_tolerance)
    meter = ctx.running.meter

    def window(n: int, seconds: float) -> dict:
        ctx.show(f"warm-up until stable (at most {p.warm_cap_s:g} s), {n} connections, {seconds:g} s windows")
        before = meter.sample()
        m = load.run_wrk(ctx.url, n, seconds, {}, ctx.load_cpus, ctx.cfg.timeout_s)
        return step_metrics(m, before, meter.sample())

    steps, record = warmup.until_stable(rule, window)
    if sum(s["successes"] for s in steps) == 0:
        raise RuntimeError("the warm-up got no successful answer")
    return record | {"window_rps": [s["rps"] for s in steps]}


def fault(ctx: Ctx, connections: int, on, off, what: str) -> dict:
    p = ctx.cfg.profile
    ctx.show(f"{what}, {connections} connections, {p.before_s + p.fault_s + p.after_s:g} s")
    t_start = time.time()
    rows, marks = timeline_load(
        ctx.cfg.vegeta,
        ctx.url,
        connections,
        p.before_s + p.fault_s + p.after_s,
        ctx.load_cpus,
        ctx.workdir,
        ctx.cfg.timeout_s,
        [(p.before_s, "fault_on", on), (p.before_s + p.fault_s, "fault_off", off)],
    )
    out = fault_figures(rows, marks, ctx.sampler, t_start, time.time())
    out["connections"] = connections
    out["alive"] = bool(ctx.sampler.one().get("alive"))
    time.sleep(1)
    return out


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


def soak(ctx: Ctx) -> dict:
    p, cfg = ctx.cfg.profile, ctx.cfg
    slices = []
    died = False
    for i in range(p.soak_minutes):
        ctx.show(f"soak, {p.soak_connections} connections, slice {i + 1}/{p.soak_minutes} of {p.soak_slice_s:g} s")
        t0 = time.time()
        try:
            m = load.run_wrk(ctx.url, p.soak_connections, p.soak_slice_s, {}, ctx.load_cpus, cfg.timeout_s)
        except RuntimeError:
            if ctx.sampler.one().get("alive"):
                raise
            died = True
            break
        t1 = time.time()
        end = ctx.sampler.one()
        slices.append(
            wrk_figures(m)
            | {
                "working_set_bytes_max": resources(ctx.sampler.window(t0, t1))["working_set_bytes"],
                "working_set_bytes": end.get("working_set_bytes"),
                "usage_bytes": end.get("usage_bytes"),
                "fds": end.get("fds"),
                "threads": end.get("threads"),
            }
        )
    if not slices:
        raise Died("gone in the first slice of the soak")
    first, lastv = slices[0], slices[-1]

    def drift(key: str) -> float | None:
        a, b = first.get(key), lastv.get(key)
        return None if a is None or b is None else b - a

    out = {
        "connections": p.soak_connections,
        "slice_s": p.soak_slice_s,
        "slices": slices,
        "drift": {k: drift(k) for k in ("working_set_bytes", "fds", "threads", "errors", "p99_ms", "rps")},
        "alive": not died and bool(ctx.sampler.one().get("alive")),
    }
    if not out["alive"]:  # beside its slices, what the soak ended with
        out["evidence"] = evidence(ctx.running)
    return out


# -- one target, the run --------------------------------------------------------------------------


@dataclass
class Config:
    profile: Profile
    targets: list[Target]
    es_url: str = "http://127.0.0.1:9250"
    city_id: int = 3  # a fixture city: every target answers it
    limits: runner.Limits | None = None
    pin: bool = True
    log_level: str = "warn"
    vegeta: str = str(runner.ROOT / ".cache" / "bin" / "vegeta")
    out: Path = runner.ROOT / "out" / "bench"
    timeout_s: int = 15


class Died(Exception):
    """The target is gone (its cgroup is empty or removed): a finding, not a harness failure."""


def evidence(running: Running, wait_s: float = 3.0) -> dict:
    """The evidence of a target found dead (its cgroup empty or gone), read before it is stopped. Its group
    can empty a moment before the process table or podman has recorded the exit (and with it the exit
    code), so this waits up to `wait_s` for running.alive() to agree."""
    deadline = time.time() + wait_s
    while running.alive() and time.time() < deadline:
        time.sleep(0.1)
    return running.evidence()


def run_target(cfg: Config, target: Target, env: Env, load_cpus: str | None, workdir: Path, progress) -> dict:
    """Both phases for one target. A scenario the target does not survive is recorded (`died`) and
    the rest of that phase is skipped; a harness error ends the target as failed."""
    p = cfg.profile
    rec: dict = {
        "target": target.name,
        "kind": target.kind,
        "meta": target.meta,
        "status": "ok",
        "reason": None,
        "died": [],
    }

    def show(what: str) -> None:
        progress.show(target.name, what)

    def phase(label: str, upstream_url: str, scenarios: list[tuple[str, Callable[[Ctx], object]]]) -> None:
        penv = Env(upstream_url, env.limits, env.cpus, env.logdir, env.log_level, env.startup_timeout_s)
        show(f"starting ({label})")
        try:
            running = target.start(penv, f"/city/v1/get?id={cfg.city_id}&language=en")
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            rec.update(status="failed", reason=f"did not start ({label}): {e}")
            return
        rec.setdefault("startup_s", running.startup_s)
        try:
            with Sampler(running, p.sample_s) as sampler:
                ctx = Ctx(cfg, running, sampler, load_cpus, workdir, show)
                for name, scenario in scenarios:
                    if rec["died"] and rec["died"][-1]["phase"] == label:
                        rec.setdefault("skipped", []).append(
                            f"{name}: the target died in {rec['died'][-1]['scenario']}"
                        )
                        continue
                    try:
                        out = scenario(ctx)
                    except Exception as e:  # noqa: BLE001
                        if sampler.one().get("alive"):
                            raise RuntimeError(f"{name}: {e}") from e
                        rec["died"].append(
                            {"phase": label, "scenario": name, "detail": str(e)[:300], "evidence": evidence(running)}
                        )
                        continue
                    if out is not None:
                        rec[name] = out
                    if not sampler.one().get("alive"):
                        rec["died"].append(
                            {"phase": label, "scenario": name, "detail": "gone after it", "evidence": evidence(running)}
                        )
                rec[f"samples ({label})"] = sampler.samples
        except Exception as e:  # noqa: BLE001
            rec.update(status="failed", reason=str(e)[:600])
        finally:
            running.stop()

    # Phase 1, straight to Elasticsearch: slow and hostile clients, then the soak.
    phase(
        "straight to Elasticsearch",
        env.upstream_url,
        [("warmup", warm_until_stable), ("clients", slow_and_hostile), ("soak", soak)],
    )
    if rec["status"] != "ok":
        return rec
    # Phase 2, through the faulting proxy: outage at each count, then the slow upstream.
    delay = 2 * TIMEOUT_MS / 1000
    with Proxy(cfg.es_url, record=False) as proxy:

        def outages(ctx: Ctx) -> list[dict]:
            out = []
            rec["outage"] = out  # what was measured before a death stays
            for n in p.outage_connections:
                out.append(fault(ctx, n, proxy.refuse, proxy.restore, "upstream outage"))
                if not out[-1]["alive"]:
                    raise Died(f"gone after the outage at {n} connections")
            return out

        def slow_upstream(ctx: Ctx) -> dict:
            return fault(
                ctx,
                p.load_connections,
                lambda: proxy.set_mode("delay", delay_s=delay),
                lambda: proxy.set_mode("pass"),
                f"slow upstream ({delay:g} s per answer)",
            ) | {"delay_s": delay}

        phase(
            "through the faulting proxy",
            proxy.url,
            # a third of the warm-up: the load before the first outage adds to it
            [("warmup (proxy)", lambda ctx: warm(ctx, 1 / 3)), ("outage", outages), ("slow_upstream", slow_upstream)],
        )
    rec["words"] = words(rec)
    return rec


def run(cfg: Config) -> Path:
    p = cfg.profile
    nofile = runner.raise_nofile(
        max([p.soak_connections, p.slow_clients + p.load_connections, *p.outage_connections]) + runner.NOFILE_MARGIN
    )
    started = dt.datetime.now(dt.UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-resilience-{p.name}"
    outdir = cfg.out / run_id
    logdir = outdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    place = placement.plan(os.cpu_count() or 1, cfg.pin)
    # the proxy and the client threads of this process run beside the load generator, off the target's CPUs
    if place.get("load"):
        os.sched_setaffinity(0, {int(c) for c in place["load"].split(",")})
    limits = cfg.limits or runner.Limits()
    env = Env(upstream_url=cfg.es_url, limits=limits, cpus=place.get("target"), logdir=logdir, log_level=cfg.log_level)
    doc = {
        "schema": SCHEMA,
        "run_id": run_id,
        "started": started.isoformat(timespec="seconds"),
        "finished": None,
        "wall_s": None,
        "profile": asdict(p),
        "machine": runner.machine(cfg.vegeta),
        "placement": place,
        "limits": {"cpus": limits.cpus, "memory_bytes": limits.memory_bytes, "swap_bytes": 0},
        "upstream": {
            "kind": "elasticsearch",
            "url": cfg.es_url,
            "timeout_ms": TIMEOUT_MS,
            "fault_proxy": "conformance/proxy.py (refuse = outage, delay = slow upstream)",
        },
        "request": {
            "path": f"/city/v1/get?id={cfg.city_id}&language=en",
            "mode": "fixed",
            "ids": 1,
            "fixed_id": cfg.city_id,
        },
        "options": {"log_level": cfg.log_level, "load_timeout_s": cfg.timeout_s, "nofile": nofile},
        "targets": [{"name": t.name, "kind": t.kind, "meta": t.meta} for t in cfg.targets],
        "resilience": [],
    }
    per_target = (
        (p.warm_cap_s or p.warm_s)
        + p.warm_s
        + p.slow_load_s * 3
        + p.slow_hold_cap_s
        + p.soak_minutes * p.soak_slice_s
        + (len(p.outage_connections) + 1) * (p.before_s + p.fault_s + p.after_s + 1)
        + 20
    )
    progress = runner.Progress(len(cfg.targets), per_target)
    json_path = outdir / "run.json"
    old_term = signal.signal(signal.SIGTERM, runner._exit_on_term)
    es = None
    try:
        from .upstream import EsUpstream

        es = EsUpstream(cfg.es_url)
        es.pin(place["upstream"])
        place["upstream_pinning"] = es.pinning()
        for target in cfg.targets:
            rec = run_target(cfg, target, env, place.get("load"), outdir, progress)
            doc["resilience"].append(rec)
            progress.message(
                f"{target.name}: {rec['status']}"
                + (f" — {rec['reason']}" if rec["reason"] else "")
                + (f" — {rec['words']}" if rec.get("words") else "")
            )
            progress.next_target(rec["status"] == "ok")
            json_path.write_text(json.dumps(doc, indent=1))
    finally:
        if es is not None:
            es.stop()
            place["upstream_pinning"] = es.pinning()
        signal.signal(signal.SIGTERM, old_term)
        from . import resilience_report

        runner.finish(doc, started, outdir, resilience_report.html, cfg.out / "latest-resilience")
    return outdir


# -- plain words ----------------------------------------------------------------------------------


def _s(v: float | None) -> str:
    if v is None:
        return "?"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s"


def _recovery(v: float) -> str:
    """The recovery at the resolution of its bins."""
    return "≤ 0.1 s" if v <= 0.1 else _s(v)


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n / 1024:.0f} KiB"


def words(rec: dict) -> str:
    """One sentence per scenario, from the figures."""
    parts = [
        f"DIES in {d['scenario']} ({d['phase']})"
        + (f", {death_words(d.get('evidence'))}" if d.get("evidence") else "")
        + f": {d['detail'][:120]}"
        for d in rec.get("died", [])
    ]
    outs = rec.get("outage") or []
    if outs:
        only503 = all(_only(o, "503") for o in outs)
        p99 = "/".join(_s((o["during"]["p99_ms"] or 0) / 1000) for o in outs)
        rec_s = [o["recovery_s"] for o in outs]
        recovered = (
            "recovers in " + "/".join(_recovery(r) for r in rec_s)
            if all(r is not None for r in rec_s)
            else "does not recover within the run"
        )
        counts = "/".join(str(o["connections"]) for o in outs)
        parts.append(
            ("outage: only 503s" if only503 else "outage: not only 503s")
            + f", p99 {p99} at {counts} connections, {recovered}"
        )
    su = rec.get("slow_upstream")
    if su:
        d = su["during"]
        parts.append(
            ("slow upstream: only 504s" if _only(su, "504") else f"slow upstream: {_status_text(_answered(su))}")
            + f", p99 {_s((d['p99_ms'] or 0) / 1000)}"
            + (f", recovers in {_recovery(su['recovery_s'])}" if su["recovery_s"] is not None else ", no recovery seen")
        )
    cl = rec.get("clients")
    if cl:
        sc = cl["slow_clients"]
        held = "; ".join(
            _held(m, sc["by_mode"][m], sc["watched_s"]) for m in SLOW_MODES if m in sc.get("by_mode", {})
        ) or _held("", sc, sc["watched_s"])
        cut = [
            f"{h['kind']} {h['outcome']}" + (f" after {_size(h['bytes_sent'])}" if h["outcome"] == "cut" else "")
            for h in cl["hostile"]["senders"]
        ]
        size = _size(cl["hostile"]["senders"][0]["size"]) if cut else ""
        parts.append(held + f"; {size} senders: " + ", ".join(cut) if cut else held)
    so = rec.get("soak")
    if so and not so["alive"]:
        parts.append(f"soak: dies after {len(so['slices'])} of its slices")
    elif so:
        d = so["drift"]
        parts.append(
            f"soak: working set {_signed_size(d['working_set_bytes'])}, fds {_signed(d['fds'])}, "
            f"p99 {_signed(d['p99_ms'], ' ms')} over {len(so['slices'])} slices"
        )
    return "; ".join(parts)


def _answered(fault: dict) -> dict:
    """The answers given while the fault lasted (older run files: every request sent during it)."""
    return fault.get("during_answered") or fault["during"]


def _only(fault: dict, status: str) -> bool:
    a = _answered(fault)
    return set(a["by_status"]) <= {status} and not a["socket_errors"]


def _held(mode: str, sc: dict, watched: float) -> str:
    """How the server treated one kind of slow client, in words."""
    what = f"slow clients ({mode})" if mode else "slow clients"
    if sc["connections"] and sc["refused"] == sc["connections"]:
        return f"{what}: none accepted"
    if sc["still_open_at_end"] == 0 and sc["held_s_median"] is not None:
        return f"cuts {what} after {_s(sc['held_s_median'])}"
    if sc["closed_by_server"] == 0:
        return f"holds {what} ≥ {watched:g} s"
    return f"cuts {sc['closed_by_server']} of {sc['connections']} {what}, holds the rest ≥ {watched:g} s"


def _status_text(a: dict) -> str:
    s = ", ".join(f"{k}×{v}" for k, v in a["by_status"].items())
    return s + (f", {a['socket_errors']} socket errors" if a["socket_errors"] else "")


def _signed(v: float | None, unit: str = "") -> str:
    return "?" if v is None else f"{v:+.0f}{unit}"


def _signed_size(v: int | None) -> str:
    return "?" if v is None else ("+" if v >= 0 else "−") + _size(abs(v))


def check(doc: dict) -> list[str]:
    """What makes a resilience run file unusable: failed targets, a scenario missing its figures."""
    problems = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema {doc.get('schema')!r} is not {SCHEMA}")
    if not doc.get("resilience"):
        problems.append("no resilience results")
    for r in doc.get("resilience", []):
        name = r["target"]
        if r["status"] != "ok":
            problems.append(f"{name}: {r['reason']}")
            continue
        explained = " ".join(r.get("skipped", [])) + " ".join(d["scenario"] for d in r.get("died", []))
        for key in ("clients", "soak", "outage", "slow_upstream"):
            if not r.get(key) and key not in explained:
                problems.append(f"{name}: no {key} figures")
        for o in r.get("outage") or []:
            if not o["during"]["requests"]:
                problems.append(f"{name}: no request during the outage at {o['connections']}")
            if o["before"]["by_status"].get("200", 0) == 0:
                problems.append(f"{name}: no 200 before the outage at {o['connections']}")
        if r.get("soak") and r["soak"]["alive"] and len(r["soak"]["slices"]) != doc["profile"]["soak_minutes"]:
            problems.append(f"{name}: soak slices missing")
        if r.get("clients") and len(r["clients"]["hostile"]["senders"]) != len(HOSTILE):
            problems.append(f"{name}: hostile senders missing")
    return problems
