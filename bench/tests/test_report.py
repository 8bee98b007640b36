import ast
import copy
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import nginx, report, runner, warmup
from bench.metrics import at_fixed, cumulative, step_metrics, totals
from cityref_tools.cgroup import Sample


def result(
    name: str, kind: str, rps_per_conn: float, cpu_per_req: float, repeat: int = 0, capped: bool = False
) -> dict:
    """Two warm-up windows at 4 connections (the second 10 % cheaper when capped: never stable), steps at 1
    and 4 connections, one open-loop step."""
    steps = []
    for i, (kind_, conns) in enumerate((("warmup", 4), ("warmup", 4), ("step", 1), ("step", 4))):
        ok = int(rps_per_conn * conns * 2)
        cpu = cpu_per_req * (0.9 if capped and i == 1 else 1.0)
        load = {
            "duration_s": 2.0,
            "responses": ok,
            "successes": ok,
            "status_errors": 0,
            "socket_errors": 0,
            "errors_detail": {},
            "bytes": 0,
            "latency_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99_9": 4.0, "mean": 1.0, "max": 5.0},
        }
        m = step_metrics(load, Sample(0, 0, 0, 0, 0, 0), Sample(int(ok * cpu * 1e9), 2**20, 2**21 * conns, 0, 0, 0))
        m.update(kind=kind_, connections=conns, rate=None)
        steps.append(m)
    open_step = dict(steps[-1], kind="open", connections=None, rate=100)
    # a service's framework-only step (GET /health): 40 % of the lookup's CPU per request
    framework = [dict(steps[-1], kind="framework", cpu_ms_per_request=cpu_per_req * 400)] if kind == "bare" else []
    windows = iter(steps[:2])
    _, warm = warmup.until_stable(warmup.Rule(4, 2.0, 4.0, 0.03, agreeing=1), lambda n, s: next(windows))
    return {
        "target": name,
        "kind": kind,
        "repeat": repeat,
        "status": "ok",
        "reason": None,
        "meta": {},
        "startup_s": 0.05,
        "cpu_startup_s": 0.01,
        "verify": {"passed": True},
        "warmup": warm,
        "steps": steps + framework + [open_step],
        "totals": dict(
            totals(steps, 0.01, 0.0275, fixed_connections=4),
            framework_only=at_fixed(framework, 4) if framework else None,
        ),
        "cumulative": cumulative(steps, 0.01),
    }


def document(svc_cpu: tuple[float, float] = (100e-6, 100e-6), capped: bool = False) -> dict:
    results = [result("svc", "bare", 1000, cpu, r, capped) for r, cpu in enumerate(svc_cpu)]
    results += [result("floor (nginx → Elasticsearch)", "floor", 2000, 25e-6)]
    results += [
        {
            "target": "broken",
            "kind": "bare",
            "repeat": 0,
            "status": "failed",
            "reason": "verify gate: golden cases failed <b>",
            "meta": {},
            "startup_s": 0.1,
            "steps": [],
        }
    ]
    doc = {
        "schema": runner.SCHEMA,
        "run_id": "test",
        "wall_s": 12.0,
        "profile": {"name": "smoke", "connections": [1, 4], "repeats": 2, "fixed_connections": 4},
        "upstream": {"kind": "elasticsearch", "description": "ES"},
        "machine": {
            "cpu_model": "cpu",
            "cpus": 2,
            "memory_bytes": 2**30,
            "os": "os",
            "kernel": "k",
            "cgroup": "v1",
            "load_average_at_start": [0.1, 0.2, 0.3],
            "git": "abc",
            "versions": {"wrk": "wrk 4.1.0"},
        },
        "placement": {
            "target": "1",
            "load": "0",
            "upstream": "0",
            "note": "n",
            "upstream_pinning": {
                "how": "pinned with taskset -a",
                "cpus": "0",
                "pids": [7],
                "previous": {"7": "0-1"},
                "restored": True,
                "errors": [],
            },
        },
        "limits": {"cpus": 1.5, "memory_bytes": 2**29},
        "request": {"path": "/p", "mode": "fixed", "ids": 1, "fixed_id": 1},
        "options": {"price_per_vcpu_hour_usd": 0.0275},
        "targets": [
            {"name": "svc", "kind": "bare"},
            {"name": "floor (nginx → Elasticsearch)", "kind": "floor"},
            {"name": "broken", "kind": "bare"},
        ],
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
    assert not re.search(r"(src|href)=[\"']?https?:", page)  # nothing fetched from the network
    assert "<script" not in page
    assert "golden cases failed &lt;b&gt;" in page  # reasons are escaped
    assert "Open loop" in page and "Cumulative requests vs CPU seconds" in page
    assert "× floor" in page


def test_html_without_successful_runs() -> None:
    doc = document()
    doc["results"] = [r for r in doc["results"] if r["status"] != "ok"]
    doc["summary"] = report.summary(doc)
    assert "no data" in report.html(doc)


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed")
@pytest.mark.parametrize("kind", ["floor", "static"])
def test_nginx_configurations_are_valid(tmp_path: Path, kind: str) -> None:
    if kind == "floor":
        conf = nginx.floor_conf(tmp_path, 18080, "http://127.0.0.1:9250", 2)
    else:
        (tmp_path / "docs" / "plain").mkdir(parents=True)
        conf = nginx.static_conf(tmp_path, 18080, tmp_path / "docs", 2)
    (tmp_path / "nginx.conf").write_text(conf)
    p = subprocess.run(
        ["nginx", "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr


def test_check_flags_failures_and_missing_figures() -> None:
    from bench.cli import check

    doc = document()
    problems = check(doc)
    assert problems == ["broken (repeat 1): verify gate: golden cases failed <b>"]
    doc["results"] = doc["results"][:1]
    assert check(doc) == []
    doc["results"][0]["steps"][2]["cpu_s"] = None
    assert check(doc) == ["svc (repeat 1): a step step has no CPU figure"]


def test_text_summary_lists_every_target() -> None:
    from bench.cli import text_summary

    text = text_summary(document())
    assert "svc" in text and "floor (nginx → Elasticsearch)" in text and "verify gate" in text
    assert "0.25" in text  # the ratio to the floor
    assert "µs/req@4" in text and "100.0" in text  # CPU per request at the fixed count
    assert "⚠" not in text.splitlines()[1]
    assert "105.0 ⚠" in text_summary(document(svc_cpu=(100e-6, 110e-6)))  # the median, marked


def test_progress_eta_uses_completed_targets() -> None:
    p = runner.Progress(total_targets=4, per_target_s=100)
    assert p.eta(0) == 400  # the plan before any target completed
    p.t0 -= 0
    p.target_t0 -= 60
    p.next_target(complete=True)  # the first took 60 s
    assert p.eta(0) == pytest.approx(180, abs=1)
    p.next_target(complete=False)  # a failed target does not count as a sample
    assert p.eta(30) == pytest.approx(90, abs=1)


def test_summary_at_the_fixed_count_and_its_floor_ratio() -> None:
    rows = {r["target"]: r for r in document()["summary"]}
    svc, floor = rows["svc"], rows["floor (nginx → Elasticsearch)"]
    f = svc["at_fixed"]
    assert f["connections"] == 4
    assert f["rps"]["median"] == pytest.approx(4000)
    assert f["cpu_us_per_request"]["median"] == pytest.approx(100, rel=1e-3)
    assert f["requests_per_cpu_s"]["median"] == pytest.approx(10_000, rel=1e-3)
    assert f["p99_ms"]["median"] == 3.0
    assert f["ratio_to_floor"]["median"] == pytest.approx(0.25, rel=1e-3)
    assert floor["at_fixed"]["ratio_to_floor"]["median"] == pytest.approx(1.0)
    assert svc["ratio_to_floor_band"]["median"] == pytest.approx(svc["ratio_to_floor"])
    assert rows["broken"]["at_fixed"]["rps"] is None


def test_every_band_carries_its_spread_and_a_wide_one_is_marked() -> None:
    steady = document()
    svc = next(r for r in steady["summary"] if r["target"] == "svc")
    assert svc["at_fixed"]["cpu_us_per_request"]["spread"] == pytest.approx(0, abs=1e-3)
    assert svc["peak_rps"]["spread"] == 0 and not svc["efficiency_spread_wide"]
    assert 'class="wide-band"' not in report.html(steady)

    unsteady = document(svc_cpu=(100e-6, 110e-6))
    svc = next(r for r in unsteady["summary"] if r["target"] == "svc")
    assert svc["efficiency_spread"] == pytest.approx(10 / 105, rel=1e-2)
    assert svc["efficiency_spread_wide"]
    page = report.html(unsteady)
    row = re.search(r'<tr class="wide-band">.*?</tr>', page)
    assert row and "svc" in row[0] and "⚠" in row[0]
    assert page.count('class="wide-band"') == 1  # the floor (one repeat) is not marked


def test_overload_table() -> None:
    doc = document()
    svc = next(r for r in doc["summary"] if r["target"] == "svc")
    o = svc["overload"]
    assert o["connections"] == 4 and o["memory_peak_bytes"]["median"] == 2**21 * 4
    assert o["oom_kills"]["median"] == 0 and o["error_ratio"]["median"] == 0 and o["p99_ms"]["median"] == 3.0
    page = report.html(doc)
    assert "<h2>Overload (4 connections)</h2>" in page
    assert "OOM kills" in page and "memory high-water" in page


def test_the_framework_alone_beside_the_lookup() -> None:
    doc = document()
    svc = next(r for r in doc["summary"] if r["target"] == "svc")
    assert svc["framework_only"]["cpu_us_per_request"]["median"] == pytest.approx(40)
    assert svc["at_fixed"]["cpu_us_per_request"]["median"] == pytest.approx(100)
    floor = next(r for r in doc["summary"] if r["kind"] == "floor")
    assert floor["framework_only"]["cpu_us_per_request"] is None
    page = report.html(doc)
    assert "<h2>The framework's own cost (4 connections)</h2>" in page
    assert "svc</td><td>40.0</td><td>100.0</td><td>60.0</td><td>60.00%</td>" in page


def test_warm_up_seconds_and_the_cap_are_shown() -> None:
    doc = document()
    svc = next(r for r in doc["summary"] if r["target"] == "svc")
    assert svc["warmup"]["seconds"]["median"] == 4.0 and svc["warmup"]["capped"] == 0
    assert "<span class=capped" not in report.html(doc)
    doc = document(capped=True)
    svc = next(r for r in doc["summary"] if r["target"] == "svc")
    assert svc["warmup"]["capped"] == 2 and svc["warmup"]["converged"] == 0
    page = report.html(doc)
    assert "⚑ cap ×2" in page and "hit the cap" in page and "<h2>Warm-up</h2>" in page


def test_placement_and_its_restoration_are_reported() -> None:
    page = report.html(document())
    assert "upstream 0" in page and "previous affinity pid 7: CPUs 0-1, restored" in page


def v1_document() -> dict:
    """A run file of schema 1: no warm-up record, no fixed-count or overload figures."""
    doc = copy.deepcopy(document())
    doc["schema"] = "cityref-bench/1"
    del doc["profile"]["fixed_connections"]
    for r in doc["results"]:
        r.pop("warmup", None)
        for key in ("at_fixed", "overload"):
            (r.get("totals") or {}).pop(key, None)
    doc["summary"] = report.summary(doc)
    return doc


def test_schema_1_files_still_check_and_render() -> None:
    from bench.cli import check

    doc = v1_document()
    doc["results"] = [r for r in doc["results"] if r["status"] == "ok"]
    assert check(doc) == []
    page = report.html(doc)
    assert "Overload (4 connections)" in page and "<h2>Warm-up</h2>" not in page
    svc = next(r for r in report.summary(doc) if r["target"] == "svc")  # computed from the steps
    assert svc["overload"]["memory_peak_bytes"]["median"] == 2**21 * 4 and svc["warmup"] is None
    assert svc["at_fixed"]["connections"] == 64 and svc["at_fixed"]["rps"] is None  # no step at the default 64
    doc["profile"]["connections"] = [1, 4]
    doc["profile"]["fixed_connections"] = 4
    svc = next(r for r in report.summary(doc) if r["target"] == "svc")
    assert svc["at_fixed"]["cpu_us_per_request"]["median"] == pytest.approx(100, rel=1e-3)


def test_check_wants_the_schema_2_figures() -> None:
    from bench.cli import check

    doc = document()
    doc["results"] = doc["results"][:1]
    assert check(doc) == []
    broken = copy.deepcopy(doc)
    del broken["results"][0]["totals"]["at_fixed"]
    assert check(broken) == ["svc (repeat 1): no figures at 4 connections"]
    broken = copy.deepcopy(doc)
    broken["results"][0]["totals"]["at_fixed"]["cpu_us_per_request"] = None
    assert check(broken) == ["svc (repeat 1): incomplete figures at 4 connections"]
    broken = copy.deepcopy(doc)
    broken["results"][0]["totals"]["overload"]["memory_peak_bytes"] = None
    assert check(broken) == ["svc (repeat 1): incomplete overload figures at 4 connections"]
    broken = copy.deepcopy(doc)
    broken["results"][0]["warmup"] = None
    assert check(broken) == ["svc (repeat 1): no warm-up record"]
    broken = copy.deepcopy(doc)
    broken["results"][0]["warmup"]["windows"] = 5
    assert check(broken) == ["svc (repeat 1): the warm-up record counts 5 windows, the steps 2"]
    broken = copy.deepcopy(doc)
    broken["schema"] = "cityref-bench/0"
    assert check(broken)[0].startswith("schema 'cityref-bench/0' is not one of")


def test_report_functions_stay_short() -> None:
    tree = ast.parse(Path(report.__file__).read_text())
    long = [
        f"{n.name}: {n.end_lineno - n.lineno + 1} lines"
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 80
    ]
    assert long == []


def test_a_baseline_that_fails_its_overload_step_is_no_yardstick() -> None:
    doc = document()
    for r in doc["results"]:
        if r["kind"] == "floor":
            o = r["totals"]["overload"]
            o["error_ratio"] = 0.32
    rows = report.summary(doc)
    floor = next(r for r in rows if r["kind"] == "floor")
    svc = next(r for r in rows if r["target"] == "svc")
    assert report.baseline_failed(floor) and not report.baseline_failed(svc)
    assert svc["ratio_to_floor"] is None and svc["ratio_to_floor_band"] is None  # the whole run: left out
    assert svc["at_fixed"]["ratio_to_floor"] is not None  # the fixed count: the floor answered there
    assert "(no yardstick here)" in report.html(doc)
