"""Warm-up until stable: windows of load until the target's CPU per request stops moving.

A JIT, a connection pool or a cache makes the first seconds of a target cheaper or dearer than the
rest. Instead of guessing how long that lasts, the harness runs windows of `window_s` seconds at
`connections` and reads the CPU per request of each from the target's cgroup; the warm-up ends when
the last `agreeing` windows (3 by default) all lie within `tolerance` of the lowest of them
(relative), or when the next window would pass `cap_s` (then it did not converge). Two windows were
not enough: a JIT still compiling can give two neighbouring windows within 3 % by chance (an earlier
efficiency run saw kotlin-ktor's image stop at 197 and 192 µs and then measure 130 µs at 64 connections,
against 60 µs bare). Targets without CPU figures get the fixed warm-up steps instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    connections: int  # of each window
    window_s: float
    cap_s: float  # at most this many seconds of windows
    tolerance: float  # `agreeing` consecutive windows within this relative spread = stable
    agreeing: int = 3  # how many consecutive windows must agree (at least 2)

    @property
    def max_windows(self) -> int:
        return max(self.agreeing, int(self.cap_s / self.window_s + 1e-9))


def agree(a: float | None, b: float | None, tolerance: float) -> bool:
    """Whether b is within tolerance of a, relative to a (a window without a figure never agrees)."""
    if a is None or b is None or a <= 0:
        return False
    return abs(b - a) <= tolerance * a


def all_agree(values: list[float | None], tolerance: float) -> bool:
    """Whether every value lies within tolerance of the lowest, relative to it (max - min <= t * min)."""
    if not values or any(v is None or v <= 0 for v in values):
        return False
    return max(values) - min(values) <= tolerance * min(values)


def cpu_us_per_request(step: dict) -> float | None:
    ms = step.get("cpu_ms_per_request")
    return ms * 1000 if ms is not None else None


def until_stable(rule: Rule, window: Callable[[int, float], dict]) -> tuple[list[dict], dict]:
    """Runs window(connections, seconds) -> step until the last `agreeing` windows agree or the cap
    is reached. Returns the windows' steps and the record stored in the run file."""
    steps: list[dict] = []
    values: list[float | None] = []
    converged = False
    while len(steps) < rule.max_windows:
        step = window(rule.connections, rule.window_s)
        steps.append(step)
        values.append(cpu_us_per_request(step))
        if len(values) >= rule.agreeing and all_agree(values[-rule.agreeing :], rule.tolerance):
            converged = True
            break
    return steps, {
        "mode": "stable",
        "connections": rule.connections,
        "window_s": rule.window_s,
        "cap_s": rule.cap_s,
        "tolerance": rule.tolerance,
        "agreeing": rule.agreeing,
        "seconds": sum(s["duration_s"] for s in steps),
        "windows": len(steps),
        "window_cpu_us_per_request": values,
        "converged": converged,
        "capped": not converged,
    }


def fixed(steps: list[dict], why: str) -> dict:
    """The record of the fixed warm-up steps (targets without CPU figures, or the rule turned off)."""
    return {
        "mode": "fixed",
        "connections": [s["connections"] for s in steps],
        "seconds": sum(s["duration_s"] for s in steps),
        "windows": len(steps),
        "window_cpu_us_per_request": [cpu_us_per_request(s) for s in steps],
        "converged": None,
        "capped": False,
        "why": why,
    }
