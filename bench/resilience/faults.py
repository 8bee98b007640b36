"""Upstream outage and slow upstream: the faulting proxy (conformance/proxy.py) in front of
Elasticsearch refuses every connection, at each of `outage_connections`, or holds every request for
twice ELASTICSEARCH_TIMEOUT_MS at the normal load, for `fault_s`.

Both need per-request timing (what answered when), so their load is vegeta in a closed loop
(`-rate=0 -max-workers=N`: N workers, each sending its next request when the last one is answered)
with per-request results, read in windows by when each request was sent and answered."""

from __future__ import annotations

import csv
import io
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance.proxy import Proxy

from .. import load
from .config import TIMEOUT_MS
from .sampling import Sampler, last, resources
from .scenario import Ctx, Died

RECOVERED = 0.99  # "recovered" = from here on at least 99 % of the answers are 200s


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


# -- the scenarios --------------------------------------------------------------------------------


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


def outages(ctx: Ctx, proxy: Proxy, rec: dict) -> list[dict]:
    """The outage at each of the profile's connection counts, until the target does not survive one."""
    out = []
    rec["outage"] = out  # what was measured before a death stays
    for n in ctx.cfg.profile.outage_connections:
        out.append(fault(ctx, n, proxy.refuse, proxy.restore, "upstream outage"))
        if not out[-1]["alive"]:
            raise Died(f"gone after the outage at {n} connections")
    return out


def slow_upstream(ctx: Ctx, proxy: Proxy) -> dict:
    """Every Elasticsearch request held for twice the timeout, at the normal load."""
    delay = 2 * TIMEOUT_MS / 1000
    return fault(
        ctx,
        ctx.cfg.profile.load_connections,
        lambda: proxy.set_mode("delay", delay_s=delay),
        lambda: proxy.set_mode("pass"),
        f"slow upstream ({delay:g} s per answer)",
    ) | {"delay_s": delay}
