"""What gets benchmarked: a service bare or as its image, the nginx floor, the upstream ceiling, a URL.

`start()` launches a target under the limits and returns a `Running` with its base URL, a meter
(cgroup sample source), the startup time (launch -> first HTTP response) and a `stop()`; for the
targets the harness starts, also `alive()` and `evidence()`: a target that exits during a run is a
finding, and its exit code, the kernel's OOM verdict and its log's last lines are what make it one.
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


def _always_alive() -> bool:
    return True


def _no_evidence() -> dict:
    return {}


@dataclass
class Running:
    url: str  # base URL, no trailing slash
    path: str  # request path with %s for the id
    meter: Meter
    startup_s: float | None
    stop: Callable[[], None]
    info: dict = field(default_factory=dict)
    # Whether the target still runs; always True for what the harness did not start (ceiling, URL).
    alive: Callable[[], bool] = _always_alive
    # death_evidence() of the target, to be read before stop() (which removes its cgroup or container);
    # {} where the harness has none. Cheap, callable any number of times, also while it runs.
    evidence: Callable[[], dict] = _no_evidence


# -- the evidence of a death ----------------------------------------------------------------------

LOG_TAIL_LINES = 20
LOG_TAIL_BYTES = 64 * 1024  # read from the end of a log file: enough for 20 lines of any sane log
LOG_LINE_CHARS = 1000  # a longer line (a JSON blob, a minified stack) is cut: the run file stays small


def death_evidence(
    exit_code: int | None, oom_killed: bool | None, oom_kills: int | None, log_tail: list[str], source: str
) -> dict:
    """The record of a target that exited: `exit_code` (None while it runs; a process killed by a signal
    has minus its number, a container 128 plus it), `oom_killed` (did the kernel kill it for memory;
    None: not known), `oom_kills` (its cgroup's OOM kill counter; None where the group was not readable),
    `log_tail` (its log's last lines) and `source` (where the exit code and verdict come from)."""
    return {
        "exit_code": exit_code,
        "oom_killed": oom_killed,
        "oom_kills": oom_kills,
        "log_tail": [line[:LOG_LINE_CHARS] for line in log_tail[-LOG_TAIL_LINES:]],
        "source": source,
    }


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last `lines` lines of a log file, [] if it is missing; reads only its end, so that a service
    that logged gigabytes costs no more than one that logged nothing."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - LOG_TAIL_BYTES))
            data = f.read()
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace").splitlines()
    if size > LOG_TAIL_BYTES:
        text = text[1:]  # the first line read is a piece of one
    return [line.rstrip() for line in text[-lines:]]


def oom_kills(group: Cgroup | None) -> int | None:
    """The group's OOM kill counter (v1 `memory.oom_control`, v2 `memory.events`), None once the group
    is gone (a container's goes with it) or unreadable."""
    if group is None:
        return None
    try:
        return group.sample().oom_kills
    except (OSError, ValueError, IndexError):  # removed (FileNotFoundError) or a half-written file
        return None


def process_evidence(proc: subprocess.Popen, group: Cgroup | None, log: Path) -> dict:
    """A process the harness started in its own cgroup (bare, floor): its exit status from the process
    table, the OOM verdict from its group's counter (the harness owns the group and keeps it until
    stop(), so the counter outlives the process) and the tail of its log file."""
    kills = oom_kills(group)
    return death_evidence(proc.poll(), None if kills is None else kills > 0, kills, log_tail(log), "process")


def inspect_evidence(inspect_json: str, log_lines: list[str], kills: int | None = None) -> dict:
    """A container's evidence from `podman container inspect` (a JSON list of one) and its log's last
    lines. `State.ExitCode` counts only once it no longer runs (it is 0 while it does); the verdict is
    `State.OOMKilled`, or the container cgroup's counter (`kills`) where that was still readable and
    says so."""
    try:
        state = json.loads(inspect_json)[0]["State"]
    except (ValueError, LookupError, TypeError):  # no such container (removed) or not podman's JSON
        state = None
    if state is None:
        code, oom = None, (kills > 0 if kills is not None else None)
    else:
        running = state.get("Running") or state.get("Status") in ("running", "paused", "stopping")
        code = None if running else state.get("ExitCode")
        oom = bool(state.get("OOMKilled")) or bool(kills)
    return death_evidence(code, oom, kills, log_lines, "podman inspect")


def container_evidence(name: str, group: Cgroup | None = None, podman_cmd: str = PODMAN) -> dict:
    """A container's evidence, read through podman (two calls). Only a container that is still there has
    any: image() runs it without `--rm`, and only its stop() removes it."""
    inspect = subprocess.run([podman_cmd, "container", "inspect", name], capture_output=True, text=True, check=False)
    logs = subprocess.run(
        [podman_cmd, "logs", "--tail", str(LOG_TAIL_LINES), name],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the container's stderr comes out on podman's
        text=True,
        errors="replace",
        check=False,
    )
    lines = [line.rstrip() for line in logs.stdout.splitlines()] if logs.returncode == 0 else []
    return inspect_evidence(inspect.stdout if inspect.returncode == 0 else "", lines, oom_kills(group))


def kept_once_exited(read: Callable[[], dict]) -> Callable[[], dict]:
    """An evidence() that calls read() until it gives an exit code, then returns that answer for good: a
    dead target's evidence does not change, so it survives stop() removing the group or container it came
    from, and costs nothing more to ask again."""
    kept: dict = {}

    def evidence() -> dict:
        if kept:
            return dict(kept, log_tail=list(kept["log_tail"]))
        out = read()
        if out["exit_code"] is not None:
            kept.update(out, log_tail=list(out["log_tail"]))
        return out

    return evidence


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


def inherited() -> dict[str, str]:
    """The harness's environment without what would change a target's behaviour behind its back: tracing
    (OTEL_*) and JVM options (JAVA_TOOL_OPTIONS) reach a target only as a variant's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "JAVA_TOOL_OPTIONS"}


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
    proc = start_session(full, cwd=cwd, env=dict(inherited(), **extra_env), stdout=log, stderr=subprocess.STDOUT)
    log.close()
    try:
        t1 = first_response(probe, t0 + env.startup_timeout_s, alive=lambda: proc.poll() is None)
    except BaseException:  # Ctrl-C or SIGTERM while it starts: nothing is left running
        stop_in_group(proc, group, timeout=2)
        raise
    if t1 is None:
        stop_in_group(proc, group, timeout=2)
        raise RuntimeError(
            f"no HTTP response within {env.startup_timeout_s:.0f} s "
            f"(exit {proc.returncode}); log: {env.logdir / (name + '.log')}"
        )
    return proc, group, t1 - t0


def in_group(
    name: str,
    proc: subprocess.Popen,
    group: Cgroup,
    env: Env,
    url: str,
    startup: float | None,
    info: dict,
    log: Path | None = None,
) -> Running:
    """The Running of a process start_in_group() started: alive while the process runs, its evidence from
    the process, its group and `log` (default env.logdir/<name>.log, where start_in_group() sends its
    output)."""
    log = log or env.logdir / f"{name}.log"
    return Running(
        url,
        SERVICE_PATH,
        CgroupMeter(group),
        startup,
        lambda: stop_in_group(proc, group),
        info,
        alive=lambda: proc.poll() is None,
        evidence=kept_once_exited(lambda: process_evidence(proc, group, log)),
    )


def bare(service: str, command: list[str], label: str | None = None, extra_env: dict[str, str] | None = None) -> Target:
    """The service's own command in a cgroup; `label`: another name (the A/A twin, an observability variant),
    its own cgroup and log; `extra_env`: variables set after the spec's (a variant's)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") if label else service

    def start(env: Env, first_path: str) -> Running:
        port = free_port()
        extra = {"PORT": str(port), "ELASTICSEARCH_URL": env.upstream_url, "LOG_LEVEL": env.log_level}
        extra.update(extra_env or {})
        url = f"http://127.0.0.1:{port}"
        proc, group, startup = start_in_group(name, command, ROOT / "services" / service, env, extra, url + first_path)
        return in_group(name, proc, group, env, url, startup, {"pid": proc.pid, "cgroup": f"v{group.version}"})

    return Target(label or service, "bare", True, start, {"service": service, "command": command})


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
            # no --rm: a container that dies must stay until stop() for its exit code and OOM verdict to be
            # read; --replace removes one a killed harness left behind under the same name
            "--replace",
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

        try:
            t1 = first_response(url + first_path, t0 + env.startup_timeout_s, alive)
        except BaseException:  # Ctrl-C or SIGTERM while it starts: nothing is left running
            stop()
            raise
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
            alive=alive,
            evidence=kept_once_exited(lambda: container_evidence(name, group)),
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
        # nginx writes its errors (a worker lost to a signal, too) to its error log, not to its output
        return in_group("floor", proc, group, env, url, startup, {"workers": workers}, d / "error.log")

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


def oom_verdict(ev: dict) -> bool | None:
    """Whether the kernel killed the target for memory, by podman's flag or its cgroup's counter; None
    when neither was readable."""
    oom, kills = ev.get("oom_killed"), ev.get("oom_kills")
    if oom or kills:
        return True
    return False if oom is False or kills == 0 else None


def death_words(ev: dict | None) -> str:
    """A death's evidence in words: its exit code and the kernel's verdict ("" for a record without one)."""
    if not ev:
        return ""
    verdict = {True: "killed for memory", False: "not killed for memory", None: "OOM verdict unknown"}
    code = ev.get("exit_code")
    return f"exit {'?' if code is None else code}, {verdict[oom_verdict(ev)]}"
