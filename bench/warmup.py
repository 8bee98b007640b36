"""Warm-up until stable: windows of load until the target's CPU per request stops moving.

A JIT, a connection pool or a cache makes the first seconds of a target cheaper or dearer than the
rest. Instead of guessing how long that lasts, the harness runs windows of `window_s` seconds at
`connections` and reads the CPU per request of each from the target's cgroup. The warm-up ends when
the median of the last `agreeing` windows (3 by default) lies within `tolerance` (5 %) of the median
of the `agreeing` windows before them: the level has stopped moving. It ends unconverged when the
next window would pass `cap_s`. The time it took is a figure of its own (`steady_after_s`): JIT
warm-up is itself a question evaluators ask.

Medians of windows, not every window: on a 2-core machine consecutive 5 s windows of a target that
has settled scatter by several per cent (the machine's other core runs the load generator and
Elasticsearch), so an earlier rule, "the last 3 windows within 3 % of each other", was met by almost
no JVM target within its cap. Comparing two groups of windows, not two neighbours, also keeps a JIT
that is still compiling from passing by chance (an efficiency run saw two neighbouring windows agree
and the target then measure half that CPU per request: docs/results/history.md). Targets without CPU
figures get the fixed warm-up steps instead.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    connections: int  # of each window
    window_s: float
    cap_s: float  # at most this many seconds of windows
    tolerance: float  # the medians of the last two groups of `agreeing` windows within this = stable
    agreeing: int = 3  # windows per group (at least 2)

    @property
    def max_windows(self) -> int:
        return max(2 * self.agreeing, int(self.cap_s / self.window_s + 1e-9))

    def describe(self) -> str:
        return (
            f"median CPU per request of the last {self.agreeing} windows of {self.window_s:g} s within "
            f"{self.tolerance:.0%} of the {self.agreeing} before, at most {self.cap_s:g} s"
        )


def agree(a: float | None, b: float | None, tolerance: float) -> bool:
    """Whether b is within tolerance of a, relative to a (a window without a figure never agrees)."""
    if a is None or b is None or a <= 0:
        return False
    return abs(b - a) <= tolerance * a


def settled(values: list[float | None], agreeing: int, tolerance: float) -> bool:
    """Whether the median of the last `agreeing` values is within tolerance of the median of the
    `agreeing` before them, relative to the earlier one (a window without a figure never settles)."""
    if len(values) < 2 * agreeing:
        return False
    last, before = values[-agreeing:], values[-2 * agreeing : -agreeing]
    if any(v is None or v <= 0 for v in last + before):
        return False
    return agree(statistics.median(before), statistics.median(last), tolerance)


def cpu_us_per_request(step: dict) -> float | None:
    ms = step.get("cpu_ms_per_request")
    return ms * 1000 if ms is not None else None


def until_stable(rule: Rule, window: Callable[[int, float], dict]) -> tuple[list[dict], dict]:
    """Runs window(connections, seconds) -> step until the level has settled (`settled`) or the cap
    is reached. Returns the windows' steps and the record stored in the run file."""
    steps: list[dict] = []
    values: list[float | None] = []
    converged = False
    while len(steps) < rule.max_windows:
        step = window(rule.connections, rule.window_s)
        steps.append(step)
        values.append(cpu_us_per_request(step))
        if settled(values, rule.agreeing, rule.tolerance):
            converged = True
            break
    seconds = sum(s["duration_s"] for s in steps)
    return steps, {
        "mode": "stable",
        "rule": rule.describe(),
        "connections": rule.connections,
        "window_s": rule.window_s,
        "cap_s": rule.cap_s,
        "tolerance": rule.tolerance,
        "agreeing": rule.agreeing,
        "seconds": seconds,
        "windows": len(steps),
        "window_cpu_us_per_request": values,
        "converged": converged,
        "capped": not converged,
        "steady_after_s": seconds if converged else None,
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
