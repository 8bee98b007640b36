"""Limits and accounting through cgroups, v1 (this machine) and v2 (unified hierarchy).

A target either runs in a group the harness creates (`create`, bare processes) or in one somebody
else created (`of_pid`, e.g. podman's per-container group). Both give a `Cgroup` whose `sample()`
reads CPU, memory, throttling and OOM kills. `root` is a parameter so tests can use fixture trees.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("cpu", "cpuacct", "memory")


@dataclass(frozen=True)
class Sample:
    cpu_ns: int  # CPU time used by the group since it was created
    memory_bytes: int  # memory charged now
    memory_peak_bytes: int  # high-water mark since the last reset_peak() (v1) or creation (v2 without reset)
    throttled_ns: int  # time the group was throttled by its CPU quota
    nr_throttled: int  # periods in which it was throttled
    oom_kills: int  # processes killed by the OOM killer in the group

    def as_dict(self) -> dict:
        return asdict(self)


def _int(path: Path) -> int:
    return int(path.read_text().split()[0])


def _kv(path: Path) -> dict[str, int]:
    """Files of `key value` lines (cpu.stat, memory.events, memory.oom_control)."""
    out: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                out[parts[0]] = int(parts[1])
    return out


def version(root: Path = ROOT) -> int:
    """2 when the unified hierarchy at root has the cpu and memory controllers, else 1."""
    controllers = root / "cgroup.controllers"
    if controllers.exists() and {"cpu", "memory"} <= set(controllers.read_text().split()):
        return 2
    return 1


class Cgroup:
    version: int

    def sample(self) -> Sample: ...

    def reset_peak(self) -> bool:
        """Restart the memory high-water mark; False if the kernel cannot."""
        ...

    def procs_files(self) -> list[Path]: ...

    def memory_stat(self) -> dict[str, int]: ...

    def working_set(self, usage: int | None = None) -> int:
        """Memory charged now minus the inactive file cache: the working set the kubelet and
        cAdvisor report (and evict by), as opposed to the raw usage in sample(). `usage`: the
        charge already read with sample(), so that it is not read again."""
        usage = self.sample().memory_bytes if usage is None else usage
        stat = self.memory_stat()
        inactive = stat.get("total_inactive_file", stat.get("inactive_file", 0))
        return max(0, usage - inactive)

    def remove(self) -> None: ...

    def pids(self) -> list[int]:
        return [int(p) for p in self.procs_files()[0].read_text().split()]

    def wrap(self, argv: list[str]) -> list[str]:
        """argv run through a shell that first moves itself into the group, then execs argv."""
        joins = "; ".join(f"echo $$ > {shlex.quote(str(f))}" for f in self.procs_files())
        return ["sh", "-c", f'{joins}; exec "$@"', "sh", *argv]


class CgroupV1(Cgroup):
    version = 1

    def __init__(self, paths: dict[str, Path]):
        self.paths = paths  # controller -> directory

    def procs_files(self) -> list[Path]:
        return [self.paths[c] / "cgroup.procs" for c in V1_CONTROLLERS if c in self.paths]

    def sample(self) -> Sample:
        cpu = self.paths["cpu"]
        mem = self.paths["memory"]
        acct = self.paths.get("cpuacct", cpu)
        stat = _kv(cpu / "cpu.stat")
        return Sample(
            cpu_ns=_int(acct / "cpuacct.usage"),
            memory_bytes=_int(mem / "memory.usage_in_bytes"),
            memory_peak_bytes=_int(mem / "memory.max_usage_in_bytes"),
            throttled_ns=stat.get("throttled_time", 0),
            nr_throttled=stat.get("nr_throttled", 0),
            oom_kills=_kv(mem / "memory.oom_control").get("oom_kill", 0),
        )

    def memory_stat(self) -> dict[str, int]:
        return _kv(self.paths["memory"] / "memory.stat")

    def reset_peak(self) -> bool:
        try:
            (self.paths["memory"] / "memory.max_usage_in_bytes").write_text("0")
            return True
        except OSError:
            return False

    def remove(self) -> None:
        for c in V1_CONTROLLERS:
            if c in self.paths:
                with contextlib.suppress(FileNotFoundError):
                    self.paths[c].rmdir()


class CgroupV2(Cgroup):
    version = 2

    def __init__(self, path: Path):
        self.path = path

    def procs_files(self) -> list[Path]:
        return [self.path / "cgroup.procs"]

    def sample(self) -> Sample:
        stat = _kv(self.path / "cpu.stat")
        current = _int(self.path / "memory.current")
        peak_file = self.path / "memory.peak"
        return Sample(
            cpu_ns=stat.get("usage_usec", 0) * 1000,
            memory_bytes=current,
            memory_peak_bytes=_int(peak_file) if peak_file.exists() else current,
            throttled_ns=stat.get("throttled_usec", 0) * 1000,
            nr_throttled=stat.get("nr_throttled", 0),
            oom_kills=_kv(self.path / "memory.events").get("oom_kill", 0),
        )

    def memory_stat(self) -> dict[str, int]:
        return _kv(self.path / "memory.stat")

    def reset_peak(self) -> bool:
        # Linux >= 6.12 resets memory.peak for writers; older kernels refuse the write.
        try:
            (self.path / "memory.peak").write_text("reset\n")
            return True
        except OSError:
            return False

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.rmdir()


def create(name: str, cpus: float, memory_bytes: int, root: Path = ROOT, period_us: int = 100_000) -> Cgroup:
    """A new group `name` limited to `cpus` CPUs and `memory_bytes` of memory, swap off."""
    quota = int(cpus * period_us)
    if version(root) == 2:
        path = root / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "cpu.max").write_text(f"{quota} {period_us}")
        (path / "memory.max").write_text(str(memory_bytes))
        swap = path / "memory.swap.max"
        if swap.exists():
            swap.write_text("0")
        return CgroupV2(path)
    paths = {c: root / c / name for c in V1_CONTROLLERS}
    for p in paths.values():
        p.mkdir(parents=True, exist_ok=True)
    (paths["cpu"] / "cpu.cfs_period_us").write_text(str(period_us))
    (paths["cpu"] / "cpu.cfs_quota_us").write_text(str(quota))
    (paths["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
    memsw = paths["memory"] / "memory.memsw.limit_in_bytes"
    if memsw.exists():  # only with swap accounting; equal limits = no swap
        with contextlib.suppress(OSError):
            memsw.write_text(str(memory_bytes))
    swappiness = paths["memory"] / "memory.swappiness"
    if swappiness.exists():
        with contextlib.suppress(OSError):
            swappiness.write_text("0")
    return CgroupV1(paths)


def of_pid(pid: int, root: Path = ROOT, proc: Path = Path("/proc")) -> Cgroup:
    """The group holding pid, read from /proc/<pid>/cgroup (`hierarchy-id:controllers:path`)."""
    v1: dict[str, Path] = {}
    unified: str | None = None
    for line in (proc / str(pid) / "cgroup").read_text().splitlines():
        hid, controllers, path = line.split(":", 2)
        rel = path.lstrip("/")
        if hid == "0" and controllers == "":
            unified = rel
        names = controllers.split(",")
        for c in names:
            if c in V1_CONTROLLERS:
                # Each controller is mounted at root/<c>, or jointly at root/cpu,cpuacct (with
                # root/cpu and root/cpuacct as symlinks on most distributions).
                mount = root / c if (root / c).exists() else root / ",".join(names)
                v1[c] = mount / rel
    if version(root) == 2 and unified is not None:
        return CgroupV2(root / unified)
    if not {"cpu", "memory"} <= set(v1):
        raise RuntimeError(f"pid {pid}: no cpu and memory cgroups in {proc}/{pid}/cgroup")
    return CgroupV1(v1)


def describe(root: Path = ROOT) -> str:
    return f"cgroup v{version(root)}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False
