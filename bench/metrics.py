"""Arithmetic of the report: per-step figures from a load result and two cgroup samples, run totals."""

from __future__ import annotations

import statistics
from typing import Any

from cityref_tools.cgroup import Sample


def step_metrics(load: dict, before: Sample | None, after: Sample | None) -> dict:
    """One step: successful req/s, error ratio, latency, CPU and memory from the target's cgroup."""
    d = load["duration_s"]
    ok = load["successes"]
    errors = load["status_errors"] + load["socket_errors"]
    out: dict[str, Any] = dict(load)
    out["rps"] = ok / d if d > 0 else 0.0
    out["error_ratio"] = errors / (ok + errors) if ok + errors else 0.0
    if before is not None and after is not None:
        cpu_s = (after.cpu_ns - before.cpu_ns) / 1e9
        out.update(
            cpu_s=cpu_s,
            cpu_utilisation=cpu_s / d if d > 0 else 0.0,
            cpu_ms_per_request=cpu_s * 1000 / ok if ok else None,
            memory_bytes=after.memory_bytes,
            memory_peak_bytes=after.memory_peak_bytes,
            memory_per_rps_kib=after.memory_peak_bytes / 1024 / out["rps"] if out["rps"] else None,
            throttled_s=(after.throttled_ns - before.throttled_ns) / 1e9,
            nr_throttled=after.nr_throttled - before.nr_throttled,
            oom_kills=after.oom_kills - before.oom_kills,
        )
    else:
        out.update(
            cpu_s=None,
            cpu_utilisation=None,
            cpu_ms_per_request=None,
            memory_bytes=None,
            memory_peak_bytes=None,
            memory_per_rps_kib=None,
            throttled_s=None,
            nr_throttled=None,
            oom_kills=None,
        )
    return out


FIXED_CONNECTIONS = 64  # the connection count every target is compared at, besides its peak
SPREAD_LIMIT = 0.05  # (max - min) / median of the repeats above this marks a figure as unsteady


def totals(
    steps: list[dict],
    cpu_startup_s: float | None,
    price_per_vcpu_hour: float,
    fixed_connections: int = FIXED_CONNECTIONS,
    idle_working_set: int | None = None,
) -> dict:
    """Whole-run figures. CPU counts startup, warm-up and every step (not the verify gate);
    requests are the successful ones of warm-up and steps. `at_fixed`: the closed-loop step at
    `fixed_connections`; `overload`: the step at the largest connection count."""
    requests = sum(s["successes"] for s in steps)
    cpu = None
    if cpu_startup_s is not None and all(s["cpu_s"] is not None for s in steps):
        cpu = cpu_startup_s + sum(s["cpu_s"] for s in steps)
    per_cpu_s = requests / cpu if cpu else None
    closed = [s for s in steps if s["kind"] == "step"]
    peak = max(closed, key=lambda s: s["rps"], default=None)
    last = closed[-1] if closed else None
    errors = sum(s["status_errors"] + s["socket_errors"] for s in steps)
    return {
        "requests": requests,
        "errors": errors,
        "error_ratio": errors / (requests + errors) if requests + errors else 0.0,
        "cpu_s": cpu,
        "requests_per_cpu_s": per_cpu_s,
        "cost_per_billion_usd": 1e9 / per_cpu_s / 3600 * price_per_vcpu_hour if per_cpu_s else None,
        "peak_rps": peak["rps"] if peak else None,
        "peak_connections": peak["connections"] if peak else None,
        "cpu_us_per_request_at_peak": peak["cpu_ms_per_request"] * 1000
        if peak and peak["cpu_ms_per_request"] is not None
        else None,
        "memory_peak_bytes_last_step": last["memory_peak_bytes"] if last else None,
        "memory_peak_bytes_max": max((s["memory_peak_bytes"] for s in steps if s["memory_peak_bytes"]), default=None),
        "oom_kills": sum(s["oom_kills"] or 0 for s in steps),
        "at_fixed": at_fixed(closed, fixed_connections),
        "overload": overload(closed, idle_working_set),
    }


def _step_at(closed: list[dict], connections: int) -> dict | None:
    return next((s for s in reversed(closed) if s["connections"] == connections), None)


def _us(ms: float | None) -> float | None:
    return ms * 1000 if ms is not None else None


def at_fixed(closed: list[dict], connections: int) -> dict:
    """Steady-state efficiency at one connection count, the same for every target (None where
    the profile has no such step or the target is not measured)."""
    s = _step_at(closed, connections)
    cpu_us = _us(s["cpu_ms_per_request"]) if s else None
    return {
        "connections": connections,
        "rps": s["rps"] if s else None,
        "cpu_us_per_request": cpu_us,
        "requests_per_cpu_s": 1e6 / cpu_us if cpu_us else None,
        "p50_ms": s["latency_ms"]["p50"] if s else None,
        "p99_ms": s["latency_ms"]["p99"] if s else None,
        "error_ratio": s["error_ratio"] if s else None,
    }


def overload(closed: list[dict], idle_working_set: int | None = None) -> dict | None:
    """What the largest connection count did to the target: errors, tail latency, memory, OOM kills.
    Memory per connection: the working set after that step less the one after startup (`idle_working_set`),
    per connection."""
    if not closed:
        return None
    top = max(s["connections"] for s in closed)
    s = _step_at(closed, top)
    ws = s.get("memory_working_set_bytes")
    return {
        "connections": top,
        "rps": s["rps"],
        "error_ratio": s["error_ratio"],
        "socket_errors": s["socket_errors"],
        "p99_ms": s["latency_ms"]["p99"],
        "memory_peak_bytes": s["memory_peak_bytes"],
        "memory_working_set_bytes": ws,
        "memory_per_connection_bytes": (ws - idle_working_set) / top if ws and idle_working_set else None,
        "oom_kills": s["oom_kills"],
    }


def cumulative(steps: list[dict], cpu_startup_s: float | None) -> list[tuple[float, int]]:
    """Points (CPU seconds, requests served) after startup and after each step."""
    if cpu_startup_s is None or any(s["cpu_s"] is None for s in steps):
        return []
    cpu, req = cpu_startup_s, 0
    points = [(cpu, 0)]
    for s in steps:
        cpu += s["cpu_s"]
        req += s["successes"]
        points.append((cpu, req))
    return points


def band(values: list[float | None]) -> dict | None:
    """Median and min-max of the repeats' values (None where a repeat has no value); spread =
    (max - min) / median, the band's width relative to the median (None for a zero median)."""
    vs = [v for v in values if v is not None]
    if not vs:
        return None
    med = statistics.median(vs)
    return {
        "median": med,
        "min": min(vs),
        "max": max(vs),
        "n": len(vs),
        "spread": (max(vs) - min(vs)) / abs(med) if med else None,
    }


def wide(b: dict | None, limit: float = SPREAD_LIMIT) -> bool:
    """True when the repeats of a figure disagree by more than limit (relative to the median)."""
    return bool(b and b["n"] > 1 and b["spread"] is not None and b["spread"] > limit)


def ratio(value: float | None, floor: float | None) -> float | None:
    return value / floor if value is not None and floor else None
