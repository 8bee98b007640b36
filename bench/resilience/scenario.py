"""What the scenarios are given and what they share: their context (the target, its sampler, where the
load runs), the exception of a target gone, a dead target's evidence, wrk's figures."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..targets import Running
from .config import Config
from .sampling import Sampler


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


def wrk_figures(m: dict) -> dict:
    return {
        "rps": m["successes"] / m["duration_s"] if m["duration_s"] else None,
        "errors": m["status_errors"] + m["socket_errors"],
        "p99_ms": m["latency_ms"]["p99"],
    }
