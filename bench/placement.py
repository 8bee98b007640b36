"""CPU placement: which CPUs the load generator, the target and the upstream run on, and pinning a
process the harness did not start (the shared Elasticsearch) for the run, then putting it back."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

Runner = Callable[..., subprocess.CompletedProcess]


def plan(ncpu: int, pin: bool) -> dict:
    """Load generator on CPU 0, the target on the next one(s), the upstream on what is left — or,
    with 2 CPUs, beside the load generator, so that the target's CPU is its own."""
    if not pin or ncpu < 2:
        return {"target": None, "load": None, "upstream": None, "note": "unpinned (one CPU or --no-pin)"}
    if ncpu == 2:
        return {
            "target": "1",
            "load": "0",
            "upstream": "0",
            "note": "2 CPUs: load generator and upstream on CPU 0, target on CPU 1 (so at most 1 CPU "
            "despite the 1.5 quota)",
        }
    if ncpu == 3:
        return {"target": "1", "load": "0", "upstream": "2", "note": "3 CPUs: load 0, target 1, upstream 2"}
    return {
        "target": "1,2",
        "load": "0",
        "upstream": ",".join(str(c) for c in range(3, ncpu)),
        "note": f"{ncpu} CPUs: load 0, target 1-2, upstream 3-{ncpu - 1}",
    }


def cpu_list(cpus: set[int]) -> str:
    """{0, 1, 2, 5} -> "0-2,5" (taskset's -c syntax)."""
    out: list[str] = []
    run: list[int] = []
    for c in sorted(cpus) + [-2]:
        if run and c != run[-1] + 1:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
        run.append(c)
    return ",".join(out)


class Pinned:
    """Processes moved, every thread (`taskset -a`), onto `cpus` until restore(), which gives each
    its previous affinity back. Processes that vanished meanwhile are skipped."""

    def __init__(
        self,
        pids: list[int],
        cpus: str,
        run: Runner = subprocess.run,
        affinity: Callable[[int], set[int]] = os.sched_getaffinity,
    ):
        self.cpus = cpus
        self.run = run
        self.previous: dict[int, str] = {}
        self.errors: list[str] = []
        self.restored: bool | None = None
        for pid in pids:
            try:
                before = cpu_list(affinity(pid))
            except OSError as e:
                self.errors.append(f"pid {pid}: {e}")
                continue
            if self._taskset(pid, cpus):
                self.previous[pid] = before

    def _taskset(self, pid: int, cpus: str) -> bool:
        p = self.run(["taskset", "-a", "-p", "-c", cpus, str(pid)], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            self.errors.append(f"taskset {cpus} pid {pid}: {(p.stderr or '').strip()[:200]}")
        return p.returncode == 0

    def restore(self) -> None:
        if self.restored is not None:
            return
        self.restored = all(self._taskset(pid, cpus) for pid, cpus in self.previous.items())

    def record(self) -> dict:
        return {
            "cpus": self.cpus,
            "pids": sorted(self.previous),
            "previous": {str(p): c for p, c in self.previous.items()},
            "restored": self.restored,
            "errors": self.errors,
        }
