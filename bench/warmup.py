"""Warm-up until stable: windows of load until the target's CPU per request stops moving.

A JIT, a connection pool or a cache makes the first seconds of a target cheaper or dearer than the
rest. Instead of guessing how long that lasts, the harness runs windows of `window_s` seconds at
`connections` and reads the CPU per request of each from the target's cgroup; the warm-up ends when
two consecutive windows agree within `tolerance` (relative), or when the next window would pass
`cap_s` (then it did not converge). Targets without CPU figures get the fixed warm-up steps instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rule:
    connections: int       # of each window
    window_s: float
    cap_s: float           # at most this many seconds of windows
    tolerance: float       # two consecutive windows within this relative difference = stable

    @property
    def max_windows(self) -> int:
        return max(2, int(self.cap_s / self.window_s + 1e-9))


def agree(a: float | None, b: float | None, tolerance: float) -> bool:
    """Whether b is within tolerance of a, relative to a (a window without a figure never agrees)."""
    if a is None or b is None or a <= 0:
        return False
    return abs(b - a) <= tolerance * a


def cpu_us_per_request(step: dict) -> float | None:
    ms = step.get("cpu_ms_per_request")
    return ms * 1000 if ms is not None else None


def until_stable(rule: Rule, window: Callable[[int, float], dict]) -> tuple[list[dict], dict]:
    """Runs window(connections, seconds) -> step until two consecutive windows agree or the cap is
    reached. Returns the windows' steps and the record stored in the run file."""
    steps: list[dict] = []
    values: list[float | None] = []
    converged = False
    while len(steps) < rule.max_windows:
        step = window(rule.connections, rule.window_s)
        steps.append(step)
        values.append(cpu_us_per_request(step))
        if len(values) >= 2 and agree(values[-2], values[-1], rule.tolerance):
            converged = True
            break
    return steps, {
        "mode": "stable",
        "connections": rule.connections,
        "window_s": rule.window_s,
        "cap_s": rule.cap_s,
        "tolerance": rule.tolerance,
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
