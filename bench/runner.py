"""One benchmark run: upstream, targets in interleaved repeats, steps, JSON after every target, HTML."""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import cgroup, load, report
from .metrics import cumulative, step_metrics, totals
from .targets import Env, Limits, Running, Target
from .upstream import EsUpstream, StaticUpstream, Upstream

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "cityref-bench/1"


@dataclass
class Profile:
    name: str
    warmup: list[int]            # connections of each warm-up step
    warmup_s: float
    connections: list[int]       # the measured closed-loop steps
    step_s: float
    open_rates: list[int]        # open-loop steps (requests per second); empty = none
    open_s: float
    repeats: int
    pause_s: float = 1.0


PROFILES = {
    "quick": Profile("quick", [1, 1], 5, [1, 4, 16, 64, 256], 8, [500], 8, 1),
    "full": Profile("full", [1] * 5, 10, [2**i for i in range(1, 12)], 10, [500, 2000], 10, 3, 2.0),
    "smoke": Profile("smoke", [], 0, [1, 4], 2, [], 0, 1, 0.2),
}


@dataclass
class Config:
    profile: Profile
    targets: list[Target]
    upstream: str = "elasticsearch"        # elasticsearch | static
    es_url: str = "http://127.0.0.1:9250"
    mode: str = "fixed"                     # fixed | random
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
    out: Path = ROOT / "bench" / "out"
    timeout_s: int = 15


def placement(ncpu: int, pin: bool) -> dict:
    """Load generator on CPU 0, the target on the next one(s), the upstream on what is left."""
    if not pin or ncpu < 2:
        return {"target": None, "load": None, "upstream": None, "note": "unpinned (one CPU or --no-pin)"}
    if ncpu == 2:
        return {"target": "1", "load": "0", "upstream": None,
                "note": "2 CPUs: load generator on CPU 0, target on CPU 1 (so at most 1 CPU despite the 1.5 quota); "
                        "the upstream is not pinned and shares both"}
    if ncpu == 3:
        return {"target": "1", "load": "0", "upstream": "2", "note": "3 CPUs: load 0, target 1, upstream 2"}
    return {"target": "1,2", "load": "0", "upstream": ",".join(str(c) for c in range(3, ncpu)),
            "note": f"{ncpu} CPUs: load 0, target 1-2, upstream 3-{ncpu - 1}"}


def _cmd_version(argv: list[str]) -> str | None:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (p.stdout + p.stderr).strip().splitlines()
    # "wrk debian/4.1.0-3+b2 [epoll] Copyright …", "nginx version: nginx/1.22.1", "podman version 4.3.1"
    return " ".join(text[0].replace("version:", "").replace("version", "").split()[:2]) if text else None


def machine(cfg: Config) -> dict:
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
            "vegeta": _cmd_version([cfg.vegeta, "-version"]) if Path(cfg.vegeta).exists() else None,
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
        self.measured: list[float] = []   # wall seconds of the targets that ran all their steps
        self.tty = sys.stderr.isatty()

    def eta(self, in_target_s: float) -> float:
        """Remaining targets at the mean duration of the complete ones so far (the plan before that)."""
        per = sum(self.measured) / len(self.measured) if self.measured else self.per_target
        left = self.total - self.done_targets
        return max(0.0, left * per - min(in_target_s, per))

    def show(self, label: str, what: str) -> None:
        in_target = time.time() - self.target_t0
        line = (f"[{self.done_targets + 1}/{self.total}] {label}: {what} | elapsed {_mmss(time.time() - self.t0)}"
                f" | ETA {_mmss(self.eta(in_target))}")
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
    steps = len(p.warmup) * p.warmup_s + len(p.connections) * p.step_s + (len(p.open_rates) * p.open_s if open_loop else 0)
    n = len(p.warmup) + len(p.connections) + (len(p.open_rates) if open_loop else 0)
    return steps + n * (p.pause_s + 0.3) + (12 if verify else 0) + 4


def slug(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9.-]+", "-", name).strip("-")


def verify_gate(running: Running, outdir: Path, name: str | None) -> tuple[bool, str]:
    """The conformance suite's golden cases against the running target; with the service's name,
    its documented known failures (conformance/known-failures.yaml) count as expected."""
    outdir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "conformance", "--base-url", running.url, "--only", "golden",
            "--out", str(outdir), "--junit", str(outdir / "junit.xml")]
    if name:
        argv += ["--name", name]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    (outdir / "output.txt").write_text(proc.stdout + proc.stderr)
    if proc.returncode == 0:
        return True, "golden cases passed"
    failed = [line for line in proc.stdout.splitlines() if "FAILED" in line or "failed" in line.lower()]
    return False, f"golden cases failed (exit {proc.returncode}): " + "; ".join(failed[-5:])[:600]


def bench_target(cfg: Config, target: Target, repeat: int, env: Env, load_cpus: str | None,
                 ids_file: Path | None, first_id: int, outdir: Path, progress: Progress) -> dict:
    p = cfg.profile
    rec: dict = {"target": target.name, "kind": target.kind, "repeat": repeat, "status": "ok", "reason": None,
                 "meta": target.meta, "startup_s": None, "cpu_startup_s": None, "verify": None, "steps": []}
    progress.show(target.name, "starting")
    try:
        running = target.start(env, "/city/v1/get?id=%d&language=en" % first_id)
    except Exception as e:  # noqa: BLE001 - any start failure is reported, the run goes on
        rec.update(status="failed", reason=f"did not start: {e}")
        return rec
    rec["startup_s"] = running.startup_s
    rec["info"] = running.info
    try:
        verify_cpu = 0.0
        if cfg.verify and target.verify:
            progress.show(target.name, "verify gate (conformance golden cases)")
            a = running.meter.sample()
            ok, why = verify_gate(running, outdir / "verify" / f"{slug(target.name)}-{repeat}",
                                  target.meta.get("service"))
            b = running.meter.sample()
            rec["verify"] = {"passed": ok, "detail": why}
            if a and b:
                verify_cpu = (b.cpu_ns - a.cpu_ns) / 1e9
            if not ok:
                rec.update(status="failed", reason=f"verify gate: {why}")
                return rec
        start_sample = running.meter.sample()
        if running.startup_s is None:   # not launched by the harness: count its CPU from here on
            rec["cpu_startup_s"] = 0.0 if start_sample else None
        else:
            rec["cpu_startup_s"] = start_sample.cpu_ns / 1e9 - verify_cpu if start_sample else None
        rec["memory_after_startup_bytes"] = start_sample.memory_bytes if start_sample else None
        url = running.url + running.path % first_id
        wrk_env = {"BENCH_IDS": str(ids_file), "BENCH_PATH": running.path} if ids_file else {}
        plan = [("warmup", c, p.warmup_s) for c in p.warmup] + [("step", c, p.step_s) for c in p.connections]
        if cfg.open_loop:
            plan += [("open", r, p.open_s) for r in p.open_rates]
        urls = [running.url + running.path % i for i in (_read_ids(ids_file) if ids_file else [first_id])]
        for i, (kind, n, seconds) in enumerate(plan):
            what = f"{kind} {i + 1}/{len(plan)}, " + (f"{n} req/s open loop" if kind == "open" else f"{n} connections")
            progress.show(target.name, what + f", {seconds:g} s")
            running.meter.reset_peak()
            before = running.meter.sample()
            if kind == "open":
                result = load.run_vegeta(cfg.vegeta, urls, n, seconds, load_cpus, outdir, cfg.timeout_s)
            else:
                result = load.run_wrk(url, n, seconds, wrk_env, load_cpus, cfg.timeout_s)
            after = running.meter.sample()
            m = step_metrics(result, before, after)
            m.update(kind=kind, connections=n if kind != "open" else None, rate=n if kind == "open" else None)
            rec["steps"].append(m)
            if after is not None and after.oom_kills and not rec.get("oom"):
                rec["oom"] = True
            time.sleep(p.pause_s)
        measured = [s for s in rec["steps"] if s["kind"] != "open"]
        rec["totals"] = totals(measured, rec["cpu_startup_s"], cfg.price_per_vcpu_hour)
        rec["cumulative"] = cumulative(measured, rec["cpu_startup_s"])
    except Exception as e:  # noqa: BLE001
        rec.update(status="failed", reason=f"during the load steps: {e}")
    finally:
        running.stop()
    return rec


def _read_ids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def run(cfg: Config) -> Path:
    raise_nofile()
    started = dt.datetime.now(dt.timezone.utc)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-{cfg.profile.name}"
    outdir = cfg.out / run_id
    logdir = outdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    place = placement(os.cpu_count() or 1, cfg.pin)
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
        "started": started.isoformat(timespec="seconds"),
        "finished": None,
        "wall_s": None,
        "profile": asdict(cfg.profile),
        "upstream": {"kind": upstream.kind, "url": upstream.url, "description": upstream.description,
                     "setup_s": round(time.time() - t_setup, 2)},
        "machine": machine(cfg),
        "placement": place,
        "limits": {"cpus": cfg.limits.cpus, "memory_bytes": cfg.limits.memory_bytes, "swap_bytes": 0},
        "request": {"mode": cfg.mode, "path": "/city/v1/get?id=<id>&language=en", "fixed_id": cfg.city_id,
                    "ids": len(ids), "dataset_cities": cfg.dataset_cities},
        "options": {"log_level": cfg.log_level, "price_per_vcpu_hour_usd": cfg.price_per_vcpu_hour,
                    "open_loop": cfg.open_loop, "verify": cfg.verify, "wrk_timeout_s": cfg.timeout_s,
                    "wrk_max_threads": 4},
        "targets": [{"name": t.name, "kind": t.kind, "meta": t.meta} for t in cfg.targets],
        "results": [],
        "summary": [],
    }
    env = Env(upstream_url=upstream.url, limits=cfg.limits, cpus=place.get("target"), logdir=logdir,
              log_level=cfg.log_level)
    ceiling_env = Env(upstream_url=upstream.url, limits=cfg.limits, cpus=None, logdir=logdir)
    progress = Progress(len(cfg.targets) * cfg.profile.repeats, planned_target_s(cfg.profile, cfg.open_loop, cfg.verify))
    json_path = outdir / "run.json"
    try:
        for repeat in range(cfg.profile.repeats):
            for target in cfg.targets:
                if target.kind == "ceiling" and upstream.kind == "static":
                    target = Target(target.name, target.kind, False, _static_ceiling(upstream), target.meta)
                rec = bench_target(cfg, target, repeat, ceiling_env if target.kind == "ceiling" else env,
                                   place["load"], ids_file, first_id, outdir, progress)
                doc["results"].append(rec)
                t = rec.get("totals") or {}
                progress.message(f"{target.name} (repeat {repeat + 1}): {rec['status']}"
                                 + (f" — {rec['reason']}" if rec["reason"] else "")
                                 + (f" — peak {t['peak_rps']:.0f} req/s" if t.get("peak_rps") else ""))
                progress.next_target(rec["status"] == "ok")
                json_path.write_text(json.dumps(doc, indent=1))
    finally:
        upstream.stop()
        doc["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        doc["wall_s"] = round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1)
        doc["summary"] = report.summary(doc)
        json_path.write_text(json.dumps(doc, indent=1))
        (outdir / "report.html").write_text(report.html(doc))
        latest = cfg.out / "latest"
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_id)
    return outdir


def _static_ceiling(upstream: Upstream):
    path = "/city/_doc/%s"

    def start(env: Env, first_path: str) -> Running:
        return Running(upstream.url, path, upstream.meter, None, lambda: None, {"note": "the static upstream"})
    return start

