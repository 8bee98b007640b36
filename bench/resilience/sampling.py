"""What a target holds while the scenarios run: working set (cgroup usage minus inactive file cache,
what Kubernetes evicts by), raw usage, open file descriptors and threads of its cgroup, sampled
every `sample_s` by a thread of the harness."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from ..targets import CgroupMeter, Running


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
