"""The run: each target in turn through two phases, each one start of the target with its scenarios
one after the other (straight to Elasticsearch: the warm-up until stable, the slow and hostile
clients, the soak; through the faulting proxy: a shorter warm-up, the outages, the slow upstream),
then the run file and its report."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from conformance.proxy import Proxy

from .. import placement, runner
from ..targets import Env, Target
from . import report
from .clients import slow_and_hostile
from .config import SCHEMA, TIMEOUT_MS, Config
from .faults import outages, slow_upstream
from .findings import words
from .sampling import Sampler
from .scenario import Ctx, evidence
from .soak import soak
from .warm import warm, warm_until_stable


def run_target(cfg: Config, target: Target, env: Env, load_cpus: str | None, workdir: Path, progress) -> dict:
    """Both phases for one target. A scenario the target does not survive is recorded (`died`) and
    the rest of that phase is skipped; a harness error ends the target as failed."""
    p = cfg.profile
    rec: dict = {
        "target": target.name,
        "kind": target.kind,
        "meta": target.meta,
        "status": "ok",
        "reason": None,
        "died": [],
    }

    def show(what: str) -> None:
        progress.show(target.name, what)

    def phase(label: str, upstream_url: str, scenarios: list[tuple[str, Callable[[Ctx], object]]]) -> None:
        penv = Env(upstream_url, env.limits, env.cpus, env.logdir, env.log_level, env.startup_timeout_s)
        show(f"starting ({label})")
        try:
            running = target.start(penv, f"/city/v1/get?id={cfg.city_id}&language=en")
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            rec.update(status="failed", reason=f"did not start ({label}): {e}")
            return
        rec.setdefault("startup_s", running.startup_s)
        try:
            with Sampler(running, p.sample_s) as sampler:
                ctx = Ctx(cfg, running, sampler, load_cpus, workdir, show)
                for name, scenario in scenarios:
                    if rec["died"] and rec["died"][-1]["phase"] == label:
                        rec.setdefault("skipped", []).append(
                            f"{name}: the target died in {rec['died'][-1]['scenario']}"
                        )
                        continue
                    try:
                        out = scenario(ctx)
                    except Exception as e:  # noqa: BLE001
                        if sampler.one().get("alive"):
                            raise RuntimeError(f"{name}: {e}") from e
                        rec["died"].append(
                            {"phase": label, "scenario": name, "detail": str(e)[:300], "evidence": evidence(running)}
                        )
                        continue
                    if out is not None:
                        rec[name] = out
                    if not sampler.one().get("alive"):
                        rec["died"].append(
                            {"phase": label, "scenario": name, "detail": "gone after it", "evidence": evidence(running)}
                        )
                rec[f"samples ({label})"] = sampler.samples
        except Exception as e:  # noqa: BLE001
            rec.update(status="failed", reason=str(e)[:600])
        finally:
            running.stop()

    # Phase 1, straight to Elasticsearch: slow and hostile clients, then the soak.
    phase(
        "straight to Elasticsearch",
        env.upstream_url,
        [("warmup", warm_until_stable), ("clients", slow_and_hostile), ("soak", soak)],
    )
    if rec["status"] != "ok":
        return rec
    # Phase 2, through the faulting proxy: outage at each count, then the slow upstream.
    with Proxy(cfg.es_url, record=False) as proxy:
        phase(
            "through the faulting proxy",
            proxy.url,
            # a third of the warm-up: the load before the first outage adds to it
            [
                ("warmup (proxy)", lambda ctx: warm(ctx, 1 / 3)),
                ("outage", lambda ctx: outages(ctx, proxy, rec)),
                ("slow_upstream", lambda ctx: slow_upstream(ctx, proxy)),
            ],
        )
    rec["words"] = words(rec)
    return rec


def run(cfg: Config) -> Path:
    p = cfg.profile
    nofile = runner.raise_nofile(
        max([p.soak_connections, p.slow_clients + p.load_connections, *p.outage_connections]) + runner.NOFILE_MARGIN
    )
    started = dt.datetime.now(dt.UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-resilience-{p.name}"
    outdir = cfg.out / run_id
    logdir = outdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    place = placement.plan(os.cpu_count() or 1, cfg.pin)
    # the proxy and the client threads of this process run beside the load generator, off the target's CPUs
    if place.get("load"):
        os.sched_setaffinity(0, {int(c) for c in place["load"].split(",")})
    limits = cfg.limits or runner.Limits()
    env = Env(upstream_url=cfg.es_url, limits=limits, cpus=place.get("target"), logdir=logdir, log_level=cfg.log_level)
    doc = {
        "schema": SCHEMA,
        "run_id": run_id,
        "started": started.isoformat(timespec="seconds"),
        "finished": None,
        "wall_s": None,
        "profile": asdict(p),
        "machine": runner.machine(cfg.vegeta),
        "placement": place,
        "limits": {"cpus": limits.cpus, "memory_bytes": limits.memory_bytes, "swap_bytes": 0},
        "upstream": {
            "kind": "elasticsearch",
            "url": cfg.es_url,
            "timeout_ms": TIMEOUT_MS,
            "fault_proxy": "conformance/proxy.py (refuse = outage, delay = slow upstream)",
        },
        "request": {
            "path": f"/city/v1/get?id={cfg.city_id}&language=en",
            "mode": "fixed",
            "ids": 1,
            "fixed_id": cfg.city_id,
        },
        "options": {"log_level": cfg.log_level, "load_timeout_s": cfg.timeout_s, "nofile": nofile},
        "targets": [{"name": t.name, "kind": t.kind, "meta": t.meta} for t in cfg.targets],
        "resilience": [],
    }
    per_target = (
        (p.warm_cap_s or p.warm_s)
        + p.warm_s
        + p.slow_load_s * 3
        + p.slow_hold_cap_s
        + p.soak_minutes * p.soak_slice_s
        + (len(p.outage_connections) + 1) * (p.before_s + p.fault_s + p.after_s + 1)
        + 20
    )
    progress = runner.Progress(len(cfg.targets), per_target)
    json_path = outdir / "run.json"
    old_term = signal.signal(signal.SIGTERM, runner._exit_on_term)
    es = None
    try:
        from ..upstream import EsUpstream

        es = EsUpstream(cfg.es_url)
        es.pin(place["upstream"])
        place["upstream_pinning"] = es.pinning()
        for target in cfg.targets:
            rec = run_target(cfg, target, env, place.get("load"), outdir, progress)
            doc["resilience"].append(rec)
            progress.message(
                f"{target.name}: {rec['status']}"
                + (f" — {rec['reason']}" if rec["reason"] else "")
                + (f" — {rec['words']}" if rec.get("words") else "")
            )
            progress.next_target(rec["status"] == "ok")
            json_path.write_text(json.dumps(doc, indent=1))
    finally:
        if es is not None:
            es.stop()
            place["upstream_pinning"] = es.pinning()
        signal.signal(signal.SIGTERM, old_term)
        runner.finish(doc, started, outdir, report.html, cfg.out / "latest-resilience")
    return outdir
