"""Arithmetic of the report: per-step figures from a load result and two cgroup samples, run totals."""
from __future__ import annotations

import statistics
from typing import Any

from .cgroup import Sample


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
        out.update(cpu_s=None, cpu_utilisation=None, cpu_ms_per_request=None, memory_bytes=None,
                   memory_peak_bytes=None, memory_per_rps_kib=None, throttled_s=None, nr_throttled=None,
                   oom_kills=None)
    return out


def totals(steps: list[dict], cpu_startup_s: float | None, price_per_vcpu_hour: float) -> dict:
    """Whole-run figures. CPU counts startup, warm-up and every step (not the verify gate);
    requests are the successful ones of warm-up and steps."""
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
        if peak and peak["cpu_ms_per_request"] is not None else None,
        "memory_peak_bytes_last_step": last["memory_peak_bytes"] if last else None,
        "memory_peak_bytes_max": max((s["memory_peak_bytes"] for s in steps if s["memory_peak_bytes"]), default=None),
        "oom_kills": sum(s["oom_kills"] or 0 for s in steps),
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
    """Median and min-max of the repeats' values (None where a repeat has no value)."""
    vs = [v for v in values if v is not None]
    if not vs:
        return None
    return {"median": statistics.median(vs), "min": min(vs), "max": max(vs), "n": len(vs)}


def ratio(value: float | None, floor: float | None) -> float | None:
    return value / floor if value is not None and floor else None
