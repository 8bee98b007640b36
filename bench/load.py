"""Load generators: wrk (closed loop, connection steps) and vegeta (open loop, a fixed rate).

Both return a `Step`-ready dict with the same keys, so metrics and the report treat them alike.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LUA = HERE / "wrk.lua"
# wrk threads: one per connection up to this (each thread runs its own event loop over its share of the
# connections, 512 each at 2048). The open-file limit for the connections is raised by runner.raise_nofile.
WRK_MAX_THREADS = 4


def wrk_command(
    url: str,
    connections: int,
    seconds: float,
    timeout_s: int = 15,
    max_threads: int = WRK_MAX_THREADS,
    cpus: str | None = None,
) -> list[str]:
    threads = max(1, min(connections, max_threads))
    argv = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds:g}s",
        f"--timeout={timeout_s}s",
        "-s",
        str(LUA),
        url,
    ]
    return (["taskset", "-c", cpus] if cpus else []) + argv


def parse_wrk(stdout: str) -> dict:
    """The done() hook's JSON: the last line of wrk's output that parses as an object."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            return normalise_wrk(raw)
    raise ValueError("wrk printed no JSON line (is the Lua done() hook in place?)\n" + stdout[-2000:])


def normalise_wrk(raw: dict) -> dict:
    e = raw["errors"]
    status_errors = e["status"]
    socket_errors = e["connect"] + e["read"] + e["write"] + e["timeout"]
    lat = raw["latency_us"]
    return {
        "duration_s": raw["duration_us"] / 1e6,
        "responses": raw["requests"],
        "successes": raw["requests"] - status_errors,
        "status_errors": status_errors,
        "socket_errors": socket_errors,
        "errors_detail": e,
        "bytes": raw["bytes"],
        "latency_ms": {k: lat[k] / 1000 for k in ("p50", "p90", "p99", "p99_9", "mean", "max")},
    }


def run_wrk(
    url: str, connections: int, seconds: float, env: dict[str, str], cpus: str | None, timeout_s: int = 15
) -> dict:
    argv = wrk_command(url, connections, seconds, timeout_s=timeout_s, cpus=cpus)
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=dict(os.environ, **env), timeout=seconds + timeout_s + 30
    )
    if proc.returncode != 0:
        raise RuntimeError(f"wrk exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return parse_wrk(proc.stdout)


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an ascending list."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), int(-(-q * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


def parse_vegeta_csv(text: str, duration_s: float) -> dict:
    """`vegeta encode --to csv`: timestamp, code, latency_ns, bytes_out, bytes_in, error, body, attack,
    seq, method, url, headers."""
    lat: list[float] = []
    ok = status_err = socket_err = bytes_in = 0
    first_send = last_send = None
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 6:
            continue
        code, latency_ns, b_in, error = int(row[1]), int(row[2]), int(row[4]), row[5]
        sent = int(row[0])
        first_send = sent if first_send is None else min(first_send, sent)
        last_send = max(last_send or 0, sent)
        bytes_in += b_in
        lat.append(latency_ns / 1e6)
        if code == 0:
            socket_err += 1
        elif 200 <= code < 400 and not error:
            ok += 1
        else:
            status_err += 1
    lat.sort()
    # The delivered rate: successes over the span of the sends (first to last, plus one interval). A target
    # that cannot keep up fills the in-flight cap, vegeta's sends fall behind their schedule and the span
    # stretches; vegeta's own start-up and the last answer's latency are not part of it.
    n = ok + status_err + socket_err
    span = (last_send - first_send) / 1e9 * n / (n - 1) if first_send is not None and n > 1 else 0.0
    return {
        "duration_s": duration_s,
        "span_s": span,
        "delivered_rps": ok / span if span > 0 else 0.0,
        "responses": ok + status_err,
        "successes": ok,
        "status_errors": status_err,
        "socket_errors": socket_err,
        "errors_detail": {},
        "bytes": bytes_in,
        "latency_ms": {
            "p50": percentile(lat, 50),
            "p90": percentile(lat, 90),
            "p99": percentile(lat, 99),
            "p99_9": percentile(lat, 99.9),
            "mean": sum(lat) / len(lat) if lat else 0.0,
            "max": lat[-1] if lat else 0.0,
        },
    }


def run_vegeta(
    vegeta: str,
    urls: list[str],
    rate: int,
    seconds: float,
    cpus: str | None,
    workdir: Path,
    timeout_s: int = 15,
    connections: int | None = None,
) -> dict:
    """Open loop: `rate` requests per second whatever the answers, latency per request from its send.
    `connections`: at most that many connections and requests in flight (vegeta's workers and its
    per-host connection pool both capped), the fixed-rate step's 1024; None: vegeta's defaults."""
    pool = (
        [f"-workers={connections}", f"-max-workers={connections}", f"-connections={connections}"]
        + [f"-max-connections={connections}"]
        if connections
        else []
    )
    targets = workdir / "vegeta-targets.txt"
    targets.write_text("".join(f"GET {u}\n" for u in urls))
    results = workdir / "vegeta-results.bin"
    pin = ["taskset", "-c", cpus] if cpus else []
    t0 = time.monotonic()
    with results.open("wb") as out:
        subprocess.run(
            pin
            + [
                vegeta,
                "attack",
                f"-rate={rate}/s",
                f"-duration={seconds:g}s",
                f"-timeout={timeout_s}s",
                f"-targets={targets}",
                "-keepalive=true",
                *pool,
            ],
            stdout=out,
            check=True,
            timeout=seconds + timeout_s + 30,
        )
    # The attack ends once the last request is answered or timed out: a target that falls behind
    # makes the step longer than its schedule, and its CPU and req/s are per actual second.
    wall = time.monotonic() - t0
    enc = subprocess.run([vegeta, "encode", "--to", "csv", str(results)], capture_output=True, text=True, check=True)
    results.unlink()
    step = parse_vegeta_csv(enc.stdout, max(seconds, wall))
    step["target_rate"] = rate
    step["max_connections"] = connections
    return step
