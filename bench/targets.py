"""What gets benchmarked: a service bare or as its image, the nginx floor, the upstream ceiling, a URL.

`start()` launches a target under the limits and returns a `Running` with its base URL, a meter
(cgroup sample source), the startup time (launch -> first HTTP response) and a `stop()`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cityref_tools import cgroup, images, procfs
from cityref_tools.cgroup import Cgroup, Sample
from cityref_tools.processes import free_port, start_session, stop_group
from cityref_tools.readiness import first_response

from . import nginx

ROOT = Path(__file__).resolve().parent.parent
PODMAN = str(ROOT / "scripts" / "podman.sh")
SERVICE_PATH = "/city/v1/get?id=%s&language=en"


@dataclass
class Limits:
    cpus: float = 1.5
    memory_bytes: int = 512 * 2**20


@dataclass
class Env:
    """What every target start needs to know."""

    upstream_url: str
    limits: Limits
    cpus: str | None  # CPUs the target is pinned to (taskset / --cpuset-cpus), None = unpinned
    logdir: Path
    log_level: str = "warn"
    startup_timeout_s: float = 120.0


class Meter:
    def sample(self) -> Sample | None:
        return None

    def reset_peak(self) -> bool:
        return False

    def working_set(self, usage: int) -> int | None:
        """The working set (usage minus inactive file cache) where the target has a cgroup of its own."""
        return None


class CgroupMeter(Meter):
    def __init__(self, group: Cgroup):
        self.group = group

    def sample(self) -> Sample | None:
        return self.group.sample()

    def working_set(self, usage: int) -> int | None:
        return self.group.working_set(usage)

    def reset_peak(self) -> bool:
        return self.group.reset_peak()


class ProcMeter(Meter):
    """For processes the harness may not move (the shared Elasticsearch): /proc CPU ticks and RSS."""

    def __init__(self, pids: Callable[[], list[int]]):
        self.pids = pids

    def sample(self) -> Sample | None:
        cpu = rss = hwm = 0
        for pid in self.pids():
            cpu += procfs.cpu_ns(pid) or 0
            rss += (procfs.status_kib(pid, "VmRSS") or 0) * 1024
            hwm += (procfs.status_kib(pid, "VmHWM") or 0) * 1024
        return Sample(cpu_ns=cpu, memory_bytes=rss, memory_peak_bytes=hwm, throttled_ns=0, nr_throttled=0, oom_kills=0)


@dataclass
class Running:
    url: str  # base URL, no trailing slash
    path: str  # request path with %s for the id
    meter: Meter
    startup_s: float | None
    stop: Callable[[], None]
    info: dict = field(default_factory=dict)


@dataclass
class Target:
    name: str  # label in the report
    kind: str  # bare | image | floor | ceiling | url
    verify: bool  # run the conformance golden gate
    start: Callable[[Env, str], Running] = field(repr=False)  # (env, first request path) -> Running
    meta: dict = field(default_factory=dict)


def stop_in_group(proc: subprocess.Popen, group: Cgroup | None, timeout: float = 15.0) -> None:
    """Stops the process group, then kills whatever is left in its cgroup and removes the cgroup."""
    stop_group(proc, timeout)
    if group is not None:
        for _ in range(50):
            pids = group.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        for _ in range(20):
            try:
                group.remove()
                return
            except OSError:
                time.sleep(0.1)


def start_in_group(
    name: str, argv: list[str], cwd: Path, env: Env, extra_env: dict[str, str], probe: str, limits: Limits | None = None
) -> tuple[subprocess.Popen, Cgroup, float | None]:
    """argv in a new cgroup under the limits, pinned; returns the process, its group, startup seconds."""
    limits = limits or env.limits
    group = cgroup.create(f"cityref-bench-{name}-{os.getpid()}", limits.cpus, limits.memory_bytes)
    full = group.wrap(argv)
    if env.cpus:
        full = ["taskset", "-c", env.cpus] + full
    log = (env.logdir / f"{name}.log").open("ab")
    t0 = time.time()
    proc = start_session(full, cwd=cwd, env=dict(os.environ, **extra_env), stdout=log, stderr=subprocess.STDOUT)
    log.close()
    t1 = first_response(probe, t0 + env.startup_timeout_s, alive=lambda: proc.poll() is None)
    if t1 is None:
        stop_in_group(proc, group, timeout=2)
        raise RuntimeError(
            f"no HTTP response within {env.startup_timeout_s:.0f} s "
            f"(exit {proc.returncode}); log: {env.logdir / (name + '.log')}"
        )
    return proc, group, t1 - t0


def bare(service: str, command: list[str]) -> Target:
    def start(env: Env, first_path: str) -> Running:
        port = free_port()
        extra = {"PORT": str(port), "ELASTICSEARCH_URL": env.upstream_url, "LOG_LEVEL": env.log_level}
        url = f"http://127.0.0.1:{port}"
        proc, group, startup = start_in_group(
            service, command, ROOT / "services" / service, env, extra, url + first_path
        )
        return Running(
            url,
            SERVICE_PATH,
            CgroupMeter(group),
            startup,
            lambda: stop_in_group(proc, group),
            {"pid": proc.pid, "cgroup": f"v{group.version}"},
        )

    return Target(service, "bare", True, start, {"service": service, "command": command})


def podman(*args: str, check: bool = True) -> str:
    return subprocess.run([PODMAN, *args], capture_output=True, text=True, check=check).stdout.strip()


def image(label: str, ref: str, service: str | None = None, aot: bool = True) -> Target:
    """The image run like the benchmark's other targets; ``aot=False`` runs its entrypoint without the JVM's
    AOT cache (``-XX:AOTCache=…`` dropped), to show what the cache buys."""

    def start(env: Env, first_path: str) -> Running:
        entrypoint = []
        if not aot:
            argv = images.without_aot(images.entrypoint([PODMAN], ref))
            if argv is None:
                raise RuntimeError(f"{ref}: its entrypoint has no {images.AOT_CACHE_OPTION}")
            entrypoint = ["--entrypoint", json.dumps(argv)]
        port = free_port()
        name = f"cityref-bench-{port}"
        mem = env.limits.memory_bytes
        argv = [
            "run",
            "-d",
            "--rm",
            "--pull=never",
            "--network",
            "host",
            "--name",
            name,
            "--label",
            "cityref.bench=1",
            "--cpus",
            f"{env.limits.cpus:g}",
            "--memory",
            str(mem),
            "--memory-swap",
            str(mem),
            "-e",
            f"PORT={port}",
            "-e",
            f"ELASTICSEARCH_URL={env.upstream_url}",
            "-e",
            f"LOG_LEVEL={env.log_level}",
        ]
        if env.cpus:
            argv += ["--cpuset-cpus", env.cpus]
        url = f"http://127.0.0.1:{port}"
        t0 = time.time()
        subprocess.run([PODMAN, *argv, *entrypoint, ref], check=True, capture_output=True, text=True)

        def stop() -> None:
            subprocess.run(
                [PODMAN, "logs", name],
                # a label may be an image reference (--image localhost/x:tag): one file name, no directories
                stdout=(env.logdir / f"{re.sub(r'[^A-Za-z0-9._()-]+', '_', label)}.log").open("wb"),
                stderr=subprocess.STDOUT,
                check=False,
            )
            subprocess.run([PODMAN, "stop", "-t", "15", name], capture_output=True, check=False)
            subprocess.run([PODMAN, "rm", "-f", name], capture_output=True, check=False)

        def alive() -> bool:
            return podman("inspect", "--format", "{{.State.Running}}", name, check=False) == "true"

        t1 = first_response(url + first_path, t0 + env.startup_timeout_s, alive)
        if t1 is None:
            stop()
            raise RuntimeError(f"no HTTP response within {env.startup_timeout_s:.0f} s")
        pid = int(podman("inspect", "--format", "{{.State.Pid}}", name))
        group = cgroup.of_pid(pid)
        img = json.loads(podman("image", "inspect", ref))[0]
        return Running(
            url,
            SERVICE_PATH,
            CgroupMeter(group),
            t1 - t0,
            stop,
            {"container": name, "image_id": img["Id"][:19], "image_size_bytes": img.get("Size")},
        )

    return Target(label, "image", True, start, {"image": ref, "service": service, "aot_cache": aot})


def floor(upstream_label: str) -> Target:
    def start(env: Env, first_path: str) -> Running:
        port = free_port()
        d = env.logdir / "floor-nginx"
        d.mkdir(parents=True, exist_ok=True)
        workers = max(1, int(-(-env.limits.cpus // 1)))
        if env.cpus:
            workers = min(workers, len(env.cpus.split(",")))
        (d / "nginx.conf").write_text(nginx.floor_conf(d, port, env.upstream_url, workers))
        url = f"http://127.0.0.1:{port}"
        proc, group, startup = start_in_group(
            "floor",
            ["nginx", "-p", str(d), "-e", str(d / "error.log"), "-c", str(d / "nginx.conf")],
            d,
            env,
            {},
            url + first_path,
        )
        return Running(
            url, SERVICE_PATH, CgroupMeter(group), startup, lambda: stop_in_group(proc, group), {"workers": workers}
        )

    return Target(f"floor (nginx → {upstream_label})", "floor", False, start)


def ceiling(label: str, url: str, meter: Meter) -> Target:
    path = "/city/_doc/%s?_source_includes=id,countryIso,isFeatured,regionId,name.en"

    def start(env: Env, first_path: str) -> Running:
        return Running(url.rstrip("/"), path, meter, None, lambda: None, {"note": "not started by the harness"})

    return Target(f"ceiling ({label})", "ceiling", False, start)


def external(url: str) -> Target:
    def start(env: Env, first_path: str) -> Running:
        return Running(
            url.rstrip("/"),
            SERVICE_PATH,
            Meter(),
            None,
            lambda: None,
            {"note": "not started by the harness: no startup, CPU or memory figures"},
        )

    return Target(url, "url", True, start)
