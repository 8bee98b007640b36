import pytest

from bench.metrics import at_fixed, band, cumulative, overload, ratio, step_metrics, totals, wide
from cityref_tools.cgroup import Sample


def load_result(successes=1000, status=0, socket=0, seconds=2.0):
    return {
        "duration_s": seconds,
        "responses": successes + status,
        "successes": successes,
        "status_errors": status,
        "socket_errors": socket,
        "errors_detail": {},
        "bytes": 0,
        "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "mean": 1, "max": 5},
    }


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
    assert band([3, None, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3, "spread": 1.0}
    assert band([None]) is None
    assert band([0, 0])["spread"] is None
    assert ratio(50, 100) == 0.5
    assert ratio(None, 100) is None and ratio(1, None) is None


def closed_steps(conns_cpu_p99: list[tuple[int, float, float]], oom_at: int | None = None) -> list[dict]:
    """Closed-loop steps of 2 s, 1000 successes per connection count's step; CPU seconds and p99 given."""
    steps = []
    for conns, cpu, p99 in conns_cpu_p99:
        load = load_result(successes=1000, status=10 if conns >= 2048 else 0)
        load["latency_ms"] = dict(load["latency_ms"], p99=p99)
        m = step_metrics(load, sample(0), sample(cpu, peak=conns * 2**20, oom=1 if conns == oom_at else 0))
        m.update(kind="step", connections=conns)
        steps.append(m)
    return steps


def test_figures_at_the_fixed_connection_count() -> None:
    steps = closed_steps([(16, 0.05, 1.0), (64, 0.1, 4.0), (256, 0.12, 9.0)])
    f = at_fixed(steps, 64)
    assert f["connections"] == 64 and f["rps"] == 500
    assert f["cpu_us_per_request"] == pytest.approx(100)  # 0.1 CPU-s / 1000 requests
    assert f["requests_per_cpu_s"] == pytest.approx(10_000)
    assert f["p99_ms"] == 4.0 and f["error_ratio"] == 0
    missing = at_fixed(steps, 32)
    assert missing["connections"] == 32 and missing["rps"] is None and missing["cpu_us_per_request"] is None
    t = totals([dict(steps[0], kind="warmup")] + steps, 0.0, 0.0275, fixed_connections=16)
    assert t["at_fixed"]["connections"] == 16 and t["at_fixed"]["cpu_us_per_request"] == pytest.approx(50)


def test_fixed_figures_of_a_target_without_cpu() -> None:
    m = step_metrics(load_result(), None, None)
    m.update(kind="step", connections=64)
    f = at_fixed([m], 64)
    assert f["rps"] == 500 and f["cpu_us_per_request"] is None and f["requests_per_cpu_s"] is None


def test_overload_is_the_largest_connection_count() -> None:
    steps = closed_steps([(2048, 0.3, 900.0), (64, 0.1, 4.0), (1024, 0.2, 300.0)], oom_at=2048)
    o = overload(steps)
    assert o["connections"] == 2048 and o["p99_ms"] == 900.0
    assert o["error_ratio"] == pytest.approx(10 / 1010)
    assert o["memory_peak_bytes"] == 2048 * 2**20 and o["oom_kills"] == 1
    assert overload([]) is None
    assert totals(steps, 0.0, 0.0275)["overload"] == o


def test_wide_band_marks_more_than_five_percent() -> None:
    assert not wide(band([100.0]))
    assert not wide(band([100.0, 104.0]))
    assert wide(band([100.0, 106.0]))
    assert wide(band([100.0, 101.0, 95.0]))  # (101 - 95) / 100
    assert not wide(None)
