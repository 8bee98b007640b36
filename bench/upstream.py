"""The upstream every target talks to: the real Elasticsearch, or nginx serving its pre-rendered answers."""

from __future__ import annotations

import json
from pathlib import Path

from cityref_tools import elasticsearch
from cityref_tools.processes import free_port

from . import nginx
from .placement import Pinned
from .targets import CgroupMeter, Env, Limits, Meter, ProcMeter, start_in_group, stop_in_group

ROOT = Path(__file__).resolve().parent.parent
ES_PIDFILE = ROOT / ".cache" / "es" / "logs" / "es.pid"
ES_MAIN_CLASS = b"org.elasticsearch.bootstrap.Elasticsearch"


def es_pids(pidfile: Path = ES_PIDFILE, proc: Path = Path("/proc")) -> list[int]:
    """The Elasticsearch JVM: the pid file of scripts/es.sh when it names a live Elasticsearch, else
    any process running Elasticsearch's main class (a node started from another checkout)."""

    def is_es(pid: int) -> bool:
        try:
            return ES_MAIN_CLASS in (proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            return False

    try:
        pid = int(pidfile.read_text())
        if is_es(pid):
            return [pid]
    except (OSError, ValueError):
        pass
    return sorted(int(d.name) for d in proc.glob("[0-9]*") if is_es(int(d.name)))


def es_meter() -> Meter:
    """CPU and RSS of the Elasticsearch JVM (`es_pids`)."""
    return ProcMeter(es_pids)


def fixture_ids() -> tuple[list[int], list[int]]:
    fx = ROOT / "data" / "fixture"
    cities = json.loads((fx / "cities.json").read_text())
    regions = json.loads((fx / "regions.json").read_text())
    return [int(c["id"]) for c in cities], [int(r["id"]) for r in regions]


def prerender(es: str, docs: Path, city_ids: list[int]) -> int:
    """Writes docs/plain/{city,region}/<id> = the document as Elasticsearch's GET answers it (geometry
    and population left out: no service asks for them), for city_ids, the fixture, and their regions."""
    plain = docs / "plain"
    for kind in ("city", "region"):
        (plain / kind).mkdir(parents=True, exist_ok=True)
    compat = docs / "compat"
    if not compat.exists():
        compat.symlink_to("plain")
    (plain / "_cluster_health").write_text(json.dumps(elasticsearch.get(es, "/_cluster/health")))
    fx_cities, fx_regions = fixture_ids()
    region_ids: set[int] = set(fx_regions)
    wanted = sorted(set(city_ids) | set(fx_cities))
    written = 0
    for kind, ids in (("city", wanted), ("region", None)):
        if ids is None:
            ids = sorted(region_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            res = elasticsearch.get(
                es, f"/{kind}/_mget?_source_excludes=geometry,population", {"ids": [str(x) for x in chunk]}
            )
            for doc in res["docs"]:
                if not doc.get("found"):
                    continue
                for key in ("_version", "_seq_no", "_primary_term"):
                    doc.setdefault(key, 1)
                (plain / kind / doc["_id"]).write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
                written += 1
                src = doc.get("_source", {})
                if kind == "city" and isinstance(src.get("regionId"), int):
                    region_ids.add(src["regionId"])
    return written


class Upstream:
    kind: str
    url: str
    meter: Meter
    description: str

    def pin(self, cpus: str | None) -> None:
        """Move the upstream onto cpus for the run (stop() undoes it)."""

    def pinning(self) -> dict:
        """How the upstream was placed, for the run file's placement."""
        return {"how": "not pinned", "cpus": None}

    def stop(self) -> None:
        pass


class EsUpstream(Upstream):
    kind = "elasticsearch"

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.meter = es_meter()
        self.pinned: Pinned | None = None
        self.pin_note = "not pinned"
        health = elasticsearch.get(self.url, "/_cluster/health")
        self.description = (
            f"Elasticsearch at {self.url} (cluster {health.get('cluster_name')}, "
            f"status {health.get('status')}); not started or limited by the harness"
        )

    def pin(self, cpus: str | None) -> None:
        """All threads of the Elasticsearch JVM onto cpus (the load generator's on 2 CPUs) until stop()."""
        if cpus is None:
            return
        pids = es_pids()
        if not pids:
            self.pin_note = "Elasticsearch process not found on this machine: not pinned"
            return
        self.pinned = Pinned(pids, cpus)
        moved = ", ".join(map(str, sorted(self.pinned.previous)))
        self.pin_note = (
            f"Elasticsearch JVM (pid {moved}) pinned, all threads, with taskset -a for the run; its "
            "previous affinity is restored at the end"
            if moved
            else "Elasticsearch could not be pinned (see errors)"
        )

    def pinning(self) -> dict:
        rec = {"how": self.pin_note, "cpus": None}
        if self.pinned is not None:
            rec.update(self.pinned.record())
            if not self.pinned.previous:
                rec["cpus"] = None
        return rec

    def stop(self) -> None:
        if self.pinned is not None:
            self.pinned.restore()


class StaticUpstream(Upstream):
    kind = "static"

    def __init__(self, es: str, city_ids: list[int], workdir: Path, cpus: str | None, limits: Limits):
        docs = workdir / "static-docs"
        n = prerender(es.rstrip("/"), docs, city_ids)
        d = workdir / "static-nginx"
        d.mkdir(parents=True, exist_ok=True)
        port = free_port()
        workers = max(1, int(-(-limits.cpus // 1)))
        if cpus:
            workers = min(workers, len(cpus.split(",")))
        self.cpus = cpus
        (d / "nginx.conf").write_text(nginx.static_conf(d, port, docs, workers))
        self.url = f"http://127.0.0.1:{port}"
        env = Env(upstream_url="", limits=limits, cpus=cpus, logdir=workdir / "logs")
        self.proc, self.group, _ = start_in_group(
            "static-upstream",
            ["nginx", "-p", str(d), "-e", str(d / "error.log"), "-c", str(d / "nginx.conf")],
            d,
            env,
            {},
            self.url + "/_cluster/health",
        )
        self.meter = CgroupMeter(self.group)
        self.description = (
            f"static: nginx serving {n} pre-rendered Elasticsearch answers from {es} at {self.url} "
            f"(same limits as the targets, CPUs {cpus or 'unpinned'})"
        )

    def pinning(self) -> dict:
        return {"how": "started by the harness under taskset -c" if self.cpus else "not pinned", "cpus": self.cpus}

    def stop(self) -> None:
        stop_in_group(self.proc, self.group)


def es_ready(es: str) -> bool:
    return elasticsearch.problem(es) is None


def bench_data_loaded(es: str, first_id: int) -> bool:
    return elasticsearch.problem(es, city_id=first_id) is None
