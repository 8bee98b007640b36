"""One benchmark run: upstream, targets in interleaved repeats, steps, JSON after every target, HTML."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import random
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from xml.etree import ElementTree

from cityref_tools import cgroup

from . import load, observability, placement, ranking, report, warmup
from .metrics import FIXED_CONNECTIONS, at_fixed, cumulative, step_metrics, totals
from .targets import Env, Limits, Meter, Running, Target
from .upstream import EsUpstream, StaticUpstream, Upstream

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "cityref-bench/2"
SCHEMAS = ("cityref-bench/1", SCHEMA)  # what `report` and `check` read
MEASURED_KINDS = ("bare", "image", "floor")  # targets in a cgroup of their own: CPU and memory figures
SERVICE_KINDS = ("bare", "image")  # a cityref service, which also serves the framework-only route
FRAMEWORK_PATH = "/health"  # the spec's liveness route: never calls Elasticsearch
NOFILE_MARGIN = 1024  # descriptors beyond the connections (upstream, files, wrk's own)


@dataclass
class Profile:
    name: str
    warmup: list[int]  # connections of each fixed warm-up step (targets without CPU figures)
    warmup_s: float
    connections: list[int]  # the measured closed-loop steps
    step_s: float
    open_rates: list[int]  # open-loop steps (requests per second); empty = none
    open_s: float
    repeats: int
    pause_s: float = 1.0
    stable_connections: int = 64  # warm-up windows until stable at this many connections; 0 = fixed only
    stable_window_s: float = 5.0
    stable_cap_s: float = 60.0
    stable_tolerance: float = 0.05  # the last windows' median CPU per request within 5 % of the ones before
    stable_agreeing: int = 3  # windows per group of that comparison
    fixed_connections: int = FIXED_CONNECTIONS  # the count every target is also compared at
    # The block method (bench/ranking.py): `blocks` starts of every target; in each, after the warm-up,
    # `rounds` rounds that visit every target once in a seeded random order at the ranking steps — closed
    # loop at `fixed_connections` for `round_s`, then `rate` req/s offered over `rate_connections` for
    # `round_s` (0: no fixed-rate step). 0 blocks: the classic method, `repeats` whole runs per target.
    blocks: int = 0
    rounds: int = 0
    round_s: float = 5.0
    rate: int = 0
    rate_connections: int = 1024
    seed: int = 2026
    aa_service: str | None = None  # the service whose image (or bare process) runs twice: the A/A control
    bare: bool = True  # the services run bare too (publish: images only, to fit its hour)
    aot_variants: bool = True  # the JVM images also without their AOT cache


PROFILES = {
    # quick: a 90 s cap, because C2 on one CPU takes most of a minute to settle (the efficiency runs in
    # docs/results/history.md)
    "quick": Profile("quick", [1, 1], 5, [1, 4, 16, 64, 256, 1024, 2048], 8, [500], 8, 1, stable_cap_s=90.0),
    "full": Profile(
        "full",
        [1] * 5,
        10,
        [2**i for i in range(1, 12)],
        10,
        [500, 2000],
        10,
        3,
        2.0,
        stable_window_s=10.0,
        stable_cap_s=120.0,
    ),
    # publish (make bench-publish): the ranking, within an hour on 2 cores: 3 blocks (starts) of every
    # image, the A/A twin, the floor and the ceiling, 6 interleaved rounds each at 64 connections and at a
    # fixed 1000 req/s over 1024 connections; per start then 2048 connections and GET /health once
    # (services only). Bare runs and the images without AOT cache are make bench's. The rate and the A/A
    # service come from the variance budget (bench/README.md).
    "publish": Profile(
        "publish",
        [1, 1],
        5,
        [64, 2048],
        8,
        [],
        8,
        3,
        0.5,
        stable_cap_s=60.0,
        blocks=3,
        rounds=6,
        round_s=3.0,
        bare=False,
        aot_variants=False,
        rate=1000,
        rate_connections=1024,
        aa_service="java-helidon",
    ),
    # observability (make bench-observability): every service bare with its variants (bench/observability.py),
    # 2 blocks of 5 rounds at 64 connections and at a fixed 500 req/s over 64 connections; no 2048 step, no
    # A/A pair. The warm-up may take 90 s, as in quick: with 45 s and 4 rounds no JVM variant had settled (every
    # warm-up hit its cap, CPU per request still falling round to round). About 2 hours for the six services
    # and their 22 variants on 2 cores.
    "observability": Profile(
        "observability",
        [1, 1],
        5,
        [64],
        8,
        [],
        8,
        2,
        0.5,
        stable_cap_s=90.0,
        blocks=2,
        rounds=5,
        round_s=3.0,
        aot_variants=False,
        rate=500,
        rate_connections=64,
    ),
    "smoke": Profile(
        "smoke",
        [],
        0,
        [1, 4],
        2,
        [],
        0,
        1,
        0.2,
        stable_connections=4,
        stable_window_s=1.0,
        stable_cap_s=4.0,
        stable_agreeing=2,
        fixed_connections=4,
        blocks=2,
        rounds=3,
        round_s=1.0,
        rate=100,
        rate_connections=8,
    ),
}
# before-after (`--before-tag TAG`, bench/beforeafter.py): the observability profile's block method over the
# images only, every service's image at two commits: 38 minutes for the twelve images on 2 cores (the published run).
PROFILES["before-after"] = replace(PROFILES["observability"], name="before-after", bare=False)


@dataclass
class Config:
    profile: Profile
    targets: list[Target]
    upstream: str = "elasticsearch"  # elasticsearch | static
    es_url: str = "http://127.0.0.1:9250"
    mode: str = "fixed"  # fixed | random
    city_id: int = 1_000_000
    random_ids: int = 10_000
    dataset_cities: int = 100_000
    limits: Limits = field(default_factory=Limits)
    pin: bool = True
    log_level: str = "warn"
    price_per_vcpu_hour: float = 0.0275
    open_loop: bool = True
    verify: bool = True
    vegeta: str = str(ROOT / ".cache" / "bin" / "vegeta")
    out: Path = ROOT / "out" / "bench"
    timeout_s: int = 15
    command: str | None = None  # the command line that started the run, for the run file
    backend_meter: Meter | None = None  # the trace backend's process (observability variants): its CPU per step


def _cmd_version(argv: list[str]) -> str | None:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (p.stdout + p.stderr).strip().splitlines()
    # "wrk debian/4.1.0-3+b2 [epoll] Copyright …", "nginx version: nginx/1.22.1", "podman version 4.3.1"
    return " ".join(text[0].replace("version:", "").replace("version", "").split()[:2]) if text else None


def machine(vegeta: str) -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    mem = re.search(r"MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text())
    os_release = Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
    pretty = re.search(r'PRETTY_NAME="([^"]+)"', os_release)
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {
        "cpu_model": model[1] if model else platform.processor(),
        "cpus": os.cpu_count(),
        "memory_bytes": int(mem[1]) * 1024 if mem else None,
        "kernel": platform.release(),
        "os": pretty[1] if pretty else platform.platform(),
        "cgroup": f"v{cgroup.version()}",
        "load_average_at_start": os.getloadavg(),
        "git": (git.stdout.strip() or "unknown") + ("+dirty" if dirty else ""),
        "versions": {
            "wrk": _cmd_version(["wrk", "-v"]),
            "nginx": _cmd_version(["nginx", "-v"]),
            "podman": _cmd_version(["podman", "--version"]),
            "vegeta": _cmd_version([vegeta, "-version"]) if Path(vegeta).exists() else None,
            "python": sys.version.split()[0],
        },
    }


class Progress:
    """One live line on stderr: position, current step, elapsed, ETA from the planned step times."""

    def __init__(self, total_targets: int, per_target_s: float):
        self.total = total_targets
        self.per_target = per_target_s
        self.t0 = time.time()
        self.done_targets = 0
        self.target_t0 = self.t0
        self.measured: list[float] = []  # wall seconds of the targets that ran all their steps
        self.tty = sys.stderr.isatty()

    def eta(self, in_target_s: float) -> float:
        """Remaining targets at the mean duration of the complete ones so far (the plan before that)."""
        per = sum(self.measured) / len(self.measured) if self.measured else self.per_target
        left = self.total - self.done_targets
        return max(0.0, left * per - min(in_target_s, per))

    def show(self, label: str, what: str) -> None:
        in_target = time.time() - self.target_t0
        line = (
            f"[{min(self.done_targets + 1, self.total)}/{self.total}] {label}: {what}"
            f" | elapsed {_mmss(time.time() - self.t0)} | ETA {_mmss(self.eta(in_target))}"
        )
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def next_target(self, complete: bool) -> None:
        if complete:
            self.measured.append(time.time() - self.target_t0)
        self.done_targets += 1
        self.target_t0 = time.time()

    def message(self, text: str) -> None:
        sys.stderr.write(("\r\033[K" if self.tty else "") + text + "\n")
        sys.stderr.flush()


def _mmss(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def planned_target_s(p: Profile, open_loop: bool, verify: bool) -> float:
    """A guess before the first target completes: the stable warm-up at half its cap (two windows at least)."""
    if p.stable_connections:
        warm = max(2 * p.stable_agreeing * p.stable_window_s, p.stable_cap_s / 2)
        n_warm = warm / p.stable_window_s
    else:
        warm, n_warm = len(p.warmup) * p.warmup_s, len(p.warmup)
    closed = len(p.connections) + 1  # the steps and the framework-only step
    steps = warm + closed * p.step_s + (len(p.open_rates) * p.open_s if open_loop else 0)
    n = n_warm + closed + (len(p.open_rates) if open_loop else 0)
    if p.blocks:  # the rounds' steps instead of the fixed-count one
        per_round = 2 if p.rate else 1
        steps += p.rounds * per_round * p.round_s - p.step_s
        n += p.rounds * per_round - 1
    return steps + n * (p.pause_s + 0.3) + (12 if verify else 0) + 4


def slug(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9.-]+", "-", name).strip("-")


def verify_gate(running: Running, outdir: Path, name: str | None, deselect: str | None = None) -> tuple[bool, str]:
    """The conformance suite's golden cases against the running target; with the service's name,
    its documented known failures (`known_failures` in its descriptor) count as expected; `deselect`
    (a pytest -k expression of cases to leave out) for an image built at another commit."""
    outdir.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "conformance",
        "--base-url",
        running.url,
        "--only",
        "golden",
        "--out",
        str(outdir),
        "--junit",
        str(outdir / "junit.xml"),
    ]
    if name:
        argv += ["--name", name]
    if deselect:
        argv += ["--pytest-arg=-k", f"--pytest-arg=not ({deselect})"]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    (outdir / "output.txt").write_text(proc.stdout + proc.stderr)
    if proc.returncode == 0:
        return True, "golden cases passed"
    failed = junit_failures(outdir / "junit.xml")
    detail = "; ".join(failed[:5]) if failed else (proc.stderr.strip() or proc.stdout.strip())[-300:]
    return False, f"golden cases failed (exit {proc.returncode}): {detail}"[:600]


def junit_failures(path: Path) -> list[str]:
    """`check: message` of every failed or erroring test case in a JUnit XML file (none if unreadable)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return []
    out = []
    for case in root.iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            check = next((p.get("value") for p in case.iter("property") if p.get("name") == "check"), None)
            message = (problem.get("message") or "").splitlines()[0:1]
            out.append(f"{check or case.get('name')}: {message[0] if message else problem.tag}"[:200])
    return out


class Stepper:
    """Runs one load step against a running target: CPU and memory sampled around it, figures, pause."""

    def __init__(
        self,
        cfg: Config,
        running: Running,
        label: str,
        rec: dict,
        load_cpus: str | None,
        ids_file: Path | None,
        first_id: int,
        outdir: Path,
        progress: Progress,
    ):
        self.cfg, self.running, self.label, self.rec = cfg, running, label, rec
        self.load_cpus, self.outdir, self.progress = load_cpus, outdir, progress
        self.url = running.url + running.path % first_id
        self.wrk_env = {"BENCH_IDS": str(ids_file), "BENCH_PATH": running.path} if ids_file else {}
        self.urls = [running.url + running.path % i for i in (_read_ids(ids_file) if ids_file else [first_id])]

    def __call__(
        self, kind: str, n: int, seconds: float, what: str, pause: bool = True, path: str | None = None
    ) -> dict:
        """One step; `path`: a fixed path instead of the lookup (the framework-only step's /health)."""
        self.progress.show(self.label, f"{what}, {seconds:g} s")
        meter = self.running.meter
        meter.reset_peak()
        backend = self.cfg.backend_meter
        backend_before = backend.sample() if backend else None
        before = meter.sample()
        if kind in ("open", "rate"):  # rate: the ranking's fixed-rate step, its connections capped
            conns = self.cfg.profile.rate_connections if kind == "rate" else None
            result = load.run_vegeta(
                self.cfg.vegeta, self.urls, n, seconds, self.load_cpus, self.outdir, self.cfg.timeout_s, conns
            )
        elif path:
            result = load.run_wrk(self.running.url + path, n, seconds, {}, self.load_cpus, self.cfg.timeout_s)
        else:
            result = load.run_wrk(self.url, n, seconds, self.wrk_env, self.load_cpus, self.cfg.timeout_s)
        after = meter.sample()
        m = step_metrics(result, before, after)
        m["memory_working_set_bytes"] = meter.working_set(after.memory_bytes) if after else None
        backend_after = backend.sample() if backend else None
        if backend_before and backend_after:
            m["backend_cpu_s"] = (backend_after.cpu_ns - backend_before.cpu_ns) / 1e9
        opened = kind in ("open", "rate")
        m.update(kind=kind, connections=None if opened else n, rate=n if opened else None)
        self.rec["steps"].append(m)
        if after is not None and after.oom_kills and not self.rec.get("oom"):
            self.rec["oom"] = True
        if pause:
            time.sleep(self.cfg.profile.pause_s)
        return m


def warm_up(p: Profile, kind: str, step: Stepper) -> dict:
    """Windows until the CPU per request is stable for targets with CPU figures, else the fixed steps."""
    if p.stable_connections and kind in MEASURED_KINDS:
        rule = warmup.Rule(
            p.stable_connections, p.stable_window_s, p.stable_cap_s, p.stable_tolerance, p.stable_agreeing
        )
        counter = iter(range(1, rule.max_windows + 1))

        def window(n: int, seconds: float) -> dict:
            return step(
                "warmup",
                n,
                seconds,
                f"warm-up window {next(counter)} (at most {rule.max_windows}), {n} connections, until stable",
                pause=False,
            )

        _, record = warmup.until_stable(rule, window)
        time.sleep(p.pause_s)
        return record
    steps = [
        step("warmup", n, p.warmup_s, f"warm-up {i + 1}/{len(p.warmup)}, {n} connections")
        for i, n in enumerate(p.warmup)
    ]
    why = "no CPU figures for this target" if p.stable_connections else "stability warm-up turned off"
    return warmup.fixed(steps, why)


def verify(cfg: Config, target: Target, running: Running, rec: dict, outdir: Path, progress: Progress) -> float:
    """The golden gate; its CPU seconds (subtracted from the totals). Marks rec failed if it fails."""
    if not (cfg.verify and target.verify):
        return 0.0
    progress.show(target.name, "verify gate (conformance golden cases)")
    a = running.meter.sample()
    ok, why = verify_gate(
        running,
        outdir / "verify" / f"{slug(target.name)}-{rec['repeat']}",
        target.meta.get("service"),
        target.meta.get("verify_deselect"),
    )
    b = running.meter.sample()
    rec["verify"] = {"passed": ok, "detail": why}
    if not ok:
        rec.update(status="failed", reason=f"verify gate: {why}")
    return (b.cpu_ns - a.cpu_ns) / 1e9 if a and b else 0.0


def _new_record(target: Target, repeat: int) -> dict:
    return {
        "target": target.name,
        "kind": target.kind,
        "repeat": repeat,
        "status": "ok",
        "reason": None,
        "meta": target.meta,
        "startup_s": None,
        "cpu_startup_s": None,
        "verify": None,
        "warmup": None,
        "steps": [],
    }


@dataclass
class Started:
    """A target started, verified and warmed up, kept running between its visits."""

    target: Target
    rec: dict
    running: Running
    step: Stepper
    idle: int | None


def start_target(
    cfg: Config,
    target: Target,
    repeat: int,
    env: Env,
    load_cpus: str | None,
    ids_file: Path | None,
    first_id: int,
    outdir: Path,
    progress: Progress,
) -> tuple[dict, Started | None]:
    """Start, verify gate, warm-up. The record, and the started target (None if it failed: then stopped)."""
    rec = _new_record(target, repeat)
    progress.show(target.name, "starting")
    try:
        running = target.start(env, f"/city/v1/get?id={first_id}&language=en")
    except Exception as e:  # noqa: BLE001 - any start failure is reported, the run goes on
        rec.update(status="failed", reason=f"did not start: {e}")
        return rec, None
    rec["startup_s"] = running.startup_s
    rec["info"] = running.info
    try:
        verify_cpu = verify(cfg, target, running, rec, outdir, progress)
        if rec["status"] != "ok":
            running.stop()
            return rec, None
        start_sample = running.meter.sample()
        if running.startup_s is None:  # not launched by the harness: count its CPU from here on
            rec["cpu_startup_s"] = 0.0 if start_sample else None
        else:
            rec["cpu_startup_s"] = start_sample.cpu_ns / 1e9 - verify_cpu if start_sample else None
        rec["memory_after_startup_bytes"] = start_sample.memory_bytes if start_sample else None
        idle = running.meter.working_set(start_sample.memory_bytes) if start_sample else None
        rec["memory_after_startup_working_set_bytes"] = idle
        step = Stepper(cfg, running, target.name, rec, load_cpus, ids_file, first_id, outdir, progress)
        rec["warmup"] = warm_up(cfg.profile, target.kind, step)
    except Exception as e:  # noqa: BLE001
        lost(rec, running, "the warm-up", e)
        running.stop()
        return rec, None
    return rec, Started(target, rec, running, step, idle)


def lost(rec: dict, running: Running, during: str, error: Exception | None = None) -> None:
    """A target that stopped answering: died (its process or container is gone: the evidence, read before
    it is removed) or failed (still running, the step failed)."""
    if running.alive():
        rec.update(status="failed", reason=f"during {during}: {error}"[:600])
        return
    evidence = running.evidence()
    oom = " (killed for memory)" if evidence.get("oom_killed") or evidence.get("oom_kills") else ""
    rec.update(status="died", reason=f"died during {during}: exit {evidence.get('exit_code')}{oom}")
    rec["death"] = dict(evidence, during=during, error=str(error)[:300] if error else None)


def finish_target(cfg: Config, s: Started, steps_n: list[int], rounds: bool = False) -> None:
    """The remaining closed-loop steps, the framework-only step, the open-loop rates, the totals; stops it.
    `rounds`: the fixed-count figure comes from the start's rounds (the block method)."""
    p, rec, step = cfg.profile, s.rec, s.step
    try:
        if rec["status"] != "ok":
            return
        for i, n in enumerate(steps_n):
            step("step", n, p.step_s, f"step {i + 1}/{len(steps_n)}, {n} connections")
        if s.target.kind in SERVICE_KINDS:  # the framework alone: a route that never calls the upstream
            n = p.fixed_connections
            what = f"framework only: GET {FRAMEWORK_PATH}, {n} connections"
            step("framework", n, p.step_s, what, path=FRAMEWORK_PATH)
        for i, r in enumerate(p.open_rates if cfg.open_loop else []):
            step("open", r, p.open_s, f"open loop {i + 1}/{len(p.open_rates)}, {r} req/s")
    except Exception as e:  # noqa: BLE001
        lost(rec, s.running, "the load steps", e)
    finally:
        if rec["status"] == "ok" and not s.running.alive():
            lost(rec, s.running, "the load steps")
        try:
            _totals(cfg, rec, s.idle, rounds)
        finally:
            s.running.stop()


def _totals(cfg: Config, rec: dict, idle: int | None, rounds: bool) -> None:
    p = cfg.profile
    measured = [s for s in rec["steps"] if s["kind"] in ("warmup", "step", "round")]
    if not measured:
        return
    rec["totals"] = totals(
        measured,  # the rounds count in the whole run; its closed-loop steps are the kind "step" only
        rec["cpu_startup_s"],
        cfg.price_per_vcpu_hour,
        p.fixed_connections,
        idle,
    )
    framework = [s for s in rec["steps"] if s["kind"] == "framework"]
    rec["totals"]["framework_only"] = at_fixed(framework, p.fixed_connections) if framework else None
    if rounds:
        rec["totals"]["at_fixed"] = rounds_at_fixed(rec, p.fixed_connections)
    rec["cumulative"] = cumulative(measured, rec["cpu_startup_s"])


def rounds_at_fixed(rec: dict, connections: int) -> dict:
    """A start's figures at the fixed count from its own rounds, while the run goes on; at its end
    ranking.apply recomputes them with the whole block's round factors."""
    return ranking.start_at_fixed(rec, ranking.start_record(rec, "round"), connections)


def bench_target(
    cfg: Config,
    target: Target,
    repeat: int,
    env: Env,
    load_cpus: str | None,
    ids_file: Path | None,
    first_id: int,
    outdir: Path,
    progress: Progress,
) -> dict:
    """The classic method: one whole run of a target, started and stopped."""
    rec, started = start_target(cfg, target, repeat, env, load_cpus, ids_file, first_id, outdir, progress)
    if started:
        finish_target(cfg, started, cfg.profile.connections)
    return rec


def bench_block(
    cfg: Config,
    targets: list[tuple[Target, Env]],
    block: int,
    load_cpus: str | None,
    ids_file: Path | None,
    first_id: int,
    outdir: Path,
    progress: Progress,
) -> list[dict]:
    """One block of the ranking: every target started once (in a seeded random order), each warmed up;
    then `rounds` rounds, each visiting every running target once in a fresh random order at the ranking
    steps; then each start's remaining steps (services only: the larger connection counts, GET /health)."""
    p = cfg.profile
    rng = random.Random(p.seed * 1000 + block)
    order = list(targets)
    rng.shuffle(order)
    recs: list[dict] = []
    live: list[Started] = []
    try:
        for target, env in order:
            rec, started = start_target(cfg, target, block, env, load_cpus, ids_file, first_id, outdir, progress)
            recs.append(rec)
            if started:
                live.append(started)
            progress.next_target(False)
        for r in range(p.rounds):
            visit = list(live)
            rng.shuffle(visit)
            for pos, s in enumerate(visit):
                if s.rec["status"] != "ok":
                    continue
                if not s.running.alive():
                    lost(s.rec, s.running, f"round {r + 1} (before its visit)")
                    continue
                what = f"block {block + 1}/{p.blocks}, round {r + 1}/{p.rounds}"
                try:
                    n = p.fixed_connections
                    m = s.step("round", n, p.round_s, f"{what}: {n} connections")
                    m.update(round=r, position=pos)
                    if p.rate:
                        m = s.step("rate", p.rate, p.round_s, f"{what}: {p.rate} req/s, {p.rate_connections} conns")
                        m.update(round=r, position=pos, offered_connections=p.rate_connections)
                except Exception as e:  # noqa: BLE001
                    lost(s.rec, s.running, f"round {r + 1}", e)
        # the larger counts once per start (the largest even where it is the fixed one: the overload figures)
        others = [n for n in p.connections if n != p.fixed_connections or n == max(p.connections)]
        while live:
            s = live.pop(0)
            progress.show(s.target.name, f"block {block + 1}: the start's remaining steps")
            finish_target(cfg, s, others if s.target.kind in SERVICE_KINDS else [], rounds=True)
    finally:
        for s in live:  # an error or Ctrl-C: nothing is left running
            s.running.stop()
    return recs


def _read_ids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


def raise_nofile(needed: int, get=resource.getrlimit, set_=resource.setrlimit) -> int:
    """Open-file limit of the harness, inherited by wrk, vegeta and the bare targets: the hard limit,
    raised to `needed` if it is lower (root may). Returns the soft limit now in force."""
    soft, hard = get(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        try:
            set_(resource.RLIMIT_NOFILE, (needed, needed))
            return needed
        except (ValueError, OSError) as e:
            raise SystemExit(
                f"{max(needed - NOFILE_MARGIN, 0)} connections need {needed} open files; the hard "
                f"limit is {hard} and cannot be raised ({e}): ulimit -Hn {needed} or fewer connections"
            ) from None
    if soft != hard:
        set_(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def run(cfg: Config) -> Path:
    nofile = raise_nofile(max(cfg.profile.connections, default=0) + NOFILE_MARGIN)
    started = dt.datetime.now(dt.UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-{cfg.profile.name}"
    outdir = cfg.out / run_id
    logdir = outdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    place = placement.plan(os.cpu_count() or 1, cfg.pin)
    ids_file: Path | None = None
    first_id = cfg.city_id
    ids = [cfg.city_id]
    if cfg.mode == "random":
        rnd = random.Random(2020)
        ids = rnd.sample(range(1_000_000, 1_000_000 + cfg.dataset_cities), min(cfg.random_ids, cfg.dataset_cities))
        ids_file = outdir / "ids.txt"
        ids_file.write_text("\n".join(map(str, ids)) + "\n")
        first_id = ids[0]
    t_setup = time.time()
    upstream: Upstream
    if cfg.upstream == "static":
        upstream = StaticUpstream(cfg.es_url, ids, outdir, place.get("upstream"), cfg.limits)
    else:
        upstream = EsUpstream(cfg.es_url)
    doc: dict = {
        "schema": SCHEMA,
        "run_id": run_id,
        "command": cfg.command,
        "started": started.isoformat(timespec="seconds"),
        "finished": None,
        "wall_s": None,
        "profile": asdict(cfg.profile),
        "upstream": {
            "kind": upstream.kind,
            "url": upstream.url,
            "description": upstream.description,
            "setup_s": round(time.time() - t_setup, 2),
        },
        "machine": machine(cfg.vegeta),
        "placement": place,
        "limits": {"cpus": cfg.limits.cpus, "memory_bytes": cfg.limits.memory_bytes, "swap_bytes": 0},
        "request": {
            "mode": cfg.mode,
            "path": "/city/v1/get?id=<id>&language=en",
            "fixed_id": cfg.city_id,
            "ids": len(ids),
            "dataset_cities": cfg.dataset_cities,
        },
        "options": {
            "log_level": cfg.log_level,
            "price_per_vcpu_hour_usd": cfg.price_per_vcpu_hour,
            "open_loop": cfg.open_loop,
            "verify": cfg.verify,
            "wrk_timeout_s": cfg.timeout_s,
            "wrk_max_threads": load.WRK_MAX_THREADS,
            "nofile": nofile,
        },
        "targets": [{"name": t.name, "kind": t.kind, "meta": t.meta} for t in cfg.targets],
        "results": [],
        "summary": [],
    }
    env = Env(
        upstream_url=upstream.url, limits=cfg.limits, cpus=place.get("target"), logdir=logdir, log_level=cfg.log_level
    )
    ceiling_env = Env(upstream_url=upstream.url, limits=cfg.limits, cpus=None, logdir=logdir)
    progress = Progress(
        len(cfg.targets) * (cfg.profile.blocks or cfg.profile.repeats),
        planned_target_s(cfg.profile, cfg.open_loop, cfg.verify),
    )
    json_path = outdir / "run.json"
    # SIGTERM unwinds like Ctrl-C, so the finally below stops the upstream and restores its affinity.
    old_term = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        upstream.pin(place["upstream"])
        place["upstream_pinning"] = upstream.pinning()

        def env_of(target: Target) -> tuple[Target, Env]:
            if target.kind == "ceiling" and upstream.kind == "static":
                target = Target(target.name, target.kind, False, _static_ceiling(upstream), target.meta)
            return target, ceiling_env if target.kind == "ceiling" else env

        for repeat in range(cfg.profile.blocks or cfg.profile.repeats):
            if cfg.profile.blocks:  # the block method: every target started, then interleaved rounds
                recs = bench_block(
                    cfg, [env_of(t) for t in cfg.targets], repeat, place["load"], ids_file, first_id, outdir, progress
                )
                doc["results"] += recs
                for rec in recs:
                    progress.message(f"{rec['target']} (block {repeat + 1}): {rec['status']}" + _why(rec))
                json_path.write_text(json.dumps(doc, indent=1))
                continue
            for t in cfg.targets:
                target, target_env = env_of(t)
                rec = bench_target(cfg, target, repeat, target_env, place["load"], ids_file, first_id, outdir, progress)
                doc["results"].append(rec)
                tot = rec.get("totals") or {}
                progress.message(
                    f"{target.name} (repeat {repeat + 1}): {rec['status']}"
                    + _why(rec)
                    + (f" — peak {tot['peak_rps']:.0f} req/s" if tot.get("peak_rps") else "")
                )
                progress.next_target(rec["status"] == "ok")
                json_path.write_text(json.dumps(doc, indent=1))
    finally:
        upstream.stop()
        signal.signal(signal.SIGTERM, old_term)
        place["upstream_pinning"] = upstream.pinning()
        ranking.apply(doc)
        observability.apply(doc)
        doc["summary"] = report.summary(doc)
        finish(doc, started, outdir, report.html, cfg.out / "latest")
    return outdir


def finish(doc: dict, started: dt.datetime, outdir: Path, html: str, latest: Path) -> None:
    """A run's end: its times, run.json, report.html, and `latest` pointing at its directory."""
    doc["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    doc["wall_s"] = round((dt.datetime.now(dt.UTC) - started).total_seconds(), 1)
    (outdir / "run.json").write_text(json.dumps(doc, indent=1))
    (outdir / "report.html").write_text(html(doc))
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(outdir.name)


def _why(rec: dict) -> str:
    return f" — {rec['reason']}" if rec["reason"] else ""


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _static_ceiling(upstream: Upstream):
    path = "/city/_doc/%s"

    def start(env: Env, first_path: str) -> Running:
        return Running(upstream.url, path, upstream.meter, None, lambda: None, {"note": "the static upstream"})

    return start
