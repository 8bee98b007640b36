import pytest

from bench.cgroup import Sample
from bench.metrics import band, cumulative, ratio, step_metrics, totals


def load_result(successes=1000, status=0, socket=0, seconds=2.0):
    return {"duration_s": seconds, "responses": successes + status, "successes": successes, "status_errors": status,
            "socket_errors": socket, "errors_detail": {}, "bytes": 0,
            "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "mean": 1, "max": 5}}


def sample(cpu_s, mem=100 * 2**20, peak=150 * 2**20, thr=0.0, oom=0):
    return Sample(int(cpu_s * 1e9), mem, peak, int(thr * 1e9), 0, oom)


def test_step_metrics() -> None:
    m = step_metrics(load_result(successes=2000, status=10, socket=10), sample(1.0), sample(2.0, thr=0.25))
    assert m["rps"] == 1000
    assert m["error_ratio"] == pytest.approx(20 / 2020)
    assert m["cpu_s"] == pytest.approx(1.0)
    assert m["cpu_utilisation"] == pytest.approx(0.5)
    assert m["cpu_ms_per_request"] == pytest.approx(0.5)
    assert m["memory_peak_bytes"] == 150 * 2**20
    assert m["memory_per_rps_kib"] == pytest.approx(150 * 1024 / 1000)
    assert m["throttled_s"] == pytest.approx(0.25)


def test_step_metrics_without_meter() -> None:
    m = step_metrics(load_result(), None, None)
    assert m["rps"] == 500 and m["cpu_s"] is None and m["cpu_ms_per_request"] is None


def test_totals_and_cost() -> None:
    steps = []
    for kind, conns, ok, cpu in (("warmup", 1, 1000, 0.5), ("step", 1, 2000, 1.0), ("step", 4, 6000, 2.0)):
        m = step_metrics(load_result(successes=ok), sample(0), sample(cpu))
        m.update(kind=kind, connections=conns)
        steps.append(m)
    t = totals(steps, cpu_startup_s=0.5, price_per_vcpu_hour=0.0275)
    assert t["requests"] == 9000
    assert t["cpu_s"] == pytest.approx(4.0)
    assert t["requests_per_cpu_s"] == pytest.approx(2250)
    assert t["cost_per_billion_usd"] == pytest.approx(1e9 / 2250 / 3600 * 0.0275)
    assert t["peak_rps"] == 3000 and t["peak_connections"] == 4
    assert t["cpu_us_per_request_at_peak"] == pytest.approx(2.0 / 6000 * 1e6)
    assert cumulative(steps, 0.5) == [(0.5, 0), (1.0, 1000), (2.0, 3000), (4.0, 9000)]


def test_totals_without_cpu() -> None:
    m = step_metrics(load_result(), None, None)
    m.update(kind="step", connections=1)
    t = totals([m], None, 0.0275)
    assert t["requests_per_cpu_s"] is None and t["cost_per_billion_usd"] is None and t["peak_rps"] == 500
    assert cumulative([m], None) == []


def test_band_and_ratio() -> None:
    assert band([3, None, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3}
    assert band([None]) is None
    assert ratio(50, 100) == 0.5
    assert ratio(None, 100) is None and ratio(1, None) is None
