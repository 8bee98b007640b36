import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import nginx, report, runner
from bench.cgroup import Sample
from bench.metrics import cumulative, step_metrics, totals


def result(name: str, kind: str, rps_per_conn: float, cpu_per_req: float, repeat: int = 0) -> dict:
    steps = []
    for kind_, conns in (("warmup", 1), ("step", 1), ("step", 4)):
        ok = int(rps_per_conn * conns * 2)
        load = {"duration_s": 2.0, "responses": ok, "successes": ok, "status_errors": 0, "socket_errors": 0,
                "errors_detail": {}, "bytes": 0,
                "latency_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99_9": 4.0, "mean": 1.0, "max": 5.0}}
        m = step_metrics(load, Sample(0, 0, 0, 0, 0, 0),
                         Sample(int(ok * cpu_per_req * 1e9), 2**20, 2**21 * conns, 0, 0, 0))
        m.update(kind=kind_, connections=conns, rate=None)
        steps.append(m)
    open_step = dict(steps[-1], kind="open", connections=None, rate=100)
    return {"target": name, "kind": kind, "repeat": repeat, "status": "ok", "reason": None, "meta": {},
            "startup_s": 0.05, "cpu_startup_s": 0.01, "verify": {"passed": True}, "steps": steps + [open_step],
            "totals": totals(steps, 0.01, 0.0275), "cumulative": cumulative(steps, 0.01)}


def document() -> dict:
    results = [result("svc", "bare", 1000, 100e-6, r) for r in range(2)]
    results += [result("floor (nginx → Elasticsearch)", "floor", 2000, 25e-6)]
    results += [{"target": "broken", "kind": "bare", "repeat": 0, "status": "failed",
                 "reason": "verify gate: golden cases failed <b>", "meta": {}, "startup_s": 0.1, "steps": []}]
    doc = {
        "schema": runner.SCHEMA, "run_id": "test", "wall_s": 12.0,
        "profile": {"name": "smoke", "connections": [1, 4], "repeats": 2},
        "upstream": {"kind": "elasticsearch", "description": "ES"},
        "machine": {"cpu_model": "cpu", "cpus": 2, "memory_bytes": 2**30, "os": "os", "kernel": "k", "cgroup": "v1",
                    "load_average_at_start": [0.1, 0.2, 0.3], "git": "abc", "versions": {"wrk": "wrk 4.1.0"}},
        "placement": {"target": "1", "load": "0", "upstream": None, "note": "n"},
        "limits": {"cpus": 1.5, "memory_bytes": 2**29},
        "request": {"path": "/p", "mode": "fixed", "ids": 1, "fixed_id": 1},
        "options": {"price_per_vcpu_hour_usd": 0.0275},
        "targets": [{"name": "svc", "kind": "bare"}, {"name": "floor (nginx → Elasticsearch)", "kind": "floor"},
                    {"name": "broken", "kind": "bare"}],
        "results": results,
    }
    doc["summary"] = report.summary(doc)
    return doc


def test_summary_medians_and_floor_ratio() -> None:
    rows = {r["target"]: r for r in document()["summary"]}
    svc, floor = rows["svc"], rows["floor (nginx → Elasticsearch)"]
    assert svc["runs"] == 2 and svc["ok"] == 2
    assert svc["peak_rps"]["median"] == pytest.approx(4000)
    assert svc["cpu_us_per_request_at_peak"]["median"] == pytest.approx(100, rel=1e-3)
    assert floor["ratio_to_floor"] == pytest.approx(1.0)
    assert svc["ratio_to_floor"] == pytest.approx(0.25, rel=0.01)
    assert rows["broken"]["ok"] == 0 and rows["broken"]["peak_rps"] is None
    assert rows["broken"]["failures"] == ["verify gate: golden cases failed <b>"]


def test_html_is_self_contained() -> None:
    page = report.html(document())
    assert page.startswith("<!doctype html>")
    assert page.count("<svg") >= 14
    assert not re.search(r"(src|href)=[\"']?https?:", page)     # nothing fetched from the network
    assert "<script" not in page
    assert "golden cases failed &lt;b&gt;" in page               # reasons are escaped
    assert "Open loop" in page and "Cumulative requests vs CPU seconds" in page
    assert "× floor" in page


def test_html_without_successful_runs() -> None:
    doc = document()
    doc["results"] = [r for r in doc["results"] if r["status"] != "ok"]
    doc["summary"] = report.summary(doc)
    assert "no data" in report.html(doc)


def test_placement() -> None:
    assert runner.placement(1, True)["target"] is None
    assert runner.placement(2, True)["target"] == "1" and runner.placement(2, True)["load"] == "0"
    assert runner.placement(3, True)["upstream"] == "2"
    assert runner.placement(8, True) == {"target": "1,2", "load": "0", "upstream": "3,4,5,6,7",
                                         "note": "8 CPUs: load 0, target 1-2, upstream 3-7"}
    assert runner.placement(8, False)["load"] is None


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed")
@pytest.mark.parametrize("kind", ["floor", "static"])
def test_nginx_configurations_are_valid(tmp_path: Path, kind: str) -> None:
    if kind == "floor":
        conf = nginx.floor_conf(tmp_path, 18080, "http://127.0.0.1:9250", 2)
    else:
        (tmp_path / "docs" / "plain").mkdir(parents=True)
        conf = nginx.static_conf(tmp_path, 18080, tmp_path / "docs", 2)
    (tmp_path / "nginx.conf").write_text(conf)
    p = subprocess.run(["nginx", "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
                        "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_check_flags_failures_and_missing_figures() -> None:
    from bench.cli import check
    doc = document()
    problems = check(doc)
    assert problems == ["broken (repeat 1): verify gate: golden cases failed <b>"]
    doc["results"] = doc["results"][:1]
    assert check(doc) == []
    doc["results"][0]["steps"][1]["cpu_s"] = None
    assert check(doc) == ["svc (repeat 1): a step step has no CPU figure"]


def test_text_summary_lists_every_target() -> None:
    from bench.cli import text_summary
    text = text_summary(document())
    assert "svc" in text and "floor (nginx → Elasticsearch)" in text and "verify gate" in text
    assert "0.25" in text   # the ratio to the floor


def test_progress_eta_uses_completed_targets() -> None:
    p = runner.Progress(total_targets=4, per_target_s=100)
    assert p.eta(0) == 400                       # the plan before any target completed
    p.t0 -= 0
    p.target_t0 -= 60
    p.next_target(complete=True)                 # the first took 60 s
    assert p.eta(0) == pytest.approx(180, abs=1)
    p.next_target(complete=False)                # a failed target does not count as a sample
    assert p.eta(30) == pytest.approx(90, abs=1)
