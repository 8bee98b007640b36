import pytest

from bench import load

WRK_OUTPUT = """Running 2s test @ http://127.0.0.1:8081/city/v1/get?id=1000000&language=en
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   210.00us   50.00us   1.20ms   90.00%
  9000 requests in 2.00s, 1.50MB read
  Non-2xx or 3xx responses: 10
Requests/sec:   4500.00
Transfer/sec:    768.00KB
{"duration_us":2000000,"requests":9000,"bytes":1572864,"latency_us":{"min":100,"max":1200,"mean":210.00,"stdev":50.00,"p50":200,"p90":260,"p99":400,"p99_9":900},"errors":{"connect":0,"read":2,"write":0,"status":10,"timeout":1}}
"""


def test_parse_wrk_reads_the_hook_line() -> None:
    r = load.parse_wrk(WRK_OUTPUT)
    assert r["duration_s"] == 2.0
    assert r["responses"] == 9000
    assert r["successes"] == 8990  # non-2xx responses are not successes
    assert r["status_errors"] == 10
    assert r["socket_errors"] == 3
    assert r["latency_ms"]["p50"] == 0.2 and r["latency_ms"]["p99_9"] == 0.9


def test_parse_wrk_without_hook_fails() -> None:
    with pytest.raises(ValueError):
        load.parse_wrk("Requests/sec: 10\n")


def test_wrk_command_threads_and_pinning() -> None:
    argv = load.wrk_command("http://x/", 1, 10, cpus="0")
    assert argv[:3] == ["taskset", "-c", "0"]
    assert "-t1" in argv and "-c1" in argv and "--timeout=15s" in argv and "-d10s" in argv
    assert "-t4" in load.wrk_command("http://x/", 2048, 10)


def test_percentile_nearest_rank() -> None:
    values = [float(i) for i in range(1, 101)]
    assert load.percentile(values, 50) == 50
    assert load.percentile(values, 99) == 99
    assert load.percentile(values, 99.9) == 100
    assert load.percentile([], 50) == 0.0


def test_parse_vegeta_csv() -> None:
    rows = "\n".join(
        [
            "1700000000000000000,200,1000000,0,120,,,,0,GET,http://x/,",
            "1700000000000000001,200,3000000,0,120,,,,1,GET,http://x/,",
            "1700000000000000002,500,2000000,0,40,,,,2,GET,http://x/,",
            '1700000000000000003,0,15000000000,0,0,"Get ""http://x/"": timeout",,,3,GET,http://x/,',
        ]
    )
    r = load.parse_vegeta_csv(rows, 2.0)
    assert (r["successes"], r["status_errors"], r["socket_errors"], r["responses"]) == (2, 1, 1, 3)
    assert r["latency_ms"]["p50"] == 2.0
    assert r["latency_ms"]["max"] == 15000.0
    assert r["bytes"] == 280


def test_vegeta_delivered_rate_spans_the_sends() -> None:
    # 4 successes sent 0.25 s apart (4 intervals of 0.25 s: 1 s), whatever the wall time and the last latency
    t0 = 1700000000000000000
    rows = "\n".join(f"{t0 + i * 250_000_000},200,250000000,0,10,,,,{i},GET,http://x/," for i in range(4))
    r = load.parse_vegeta_csv(rows, 1.3)
    assert r["span_s"] == 1.0 and r["delivered_rps"] == 4.0
    assert r["duration_s"] == 1.3  # the step's wall time, vegeta's start-up included, stays for the CPU figures


def test_vegeta_caps_connections_and_workers_for_the_fixed_rate_step(tmp_path, monkeypatch) -> None:
    seen = []

    def fake_run(argv, **kw):
        seen.append(argv)

        class P:
            stdout = ""

        if "attack" in argv:
            kw["stdout"].write(b"")
        return P()

    monkeypatch.setattr(load.subprocess, "run", fake_run)
    load.run_vegeta("vegeta", ["http://x/"], 2000, 1, None, tmp_path, connections=1024)
    attack = next(a for a in seen if "attack" in a)
    for flag in ("-workers=1024", "-max-workers=1024", "-connections=1024", "-max-connections=1024"):
        assert flag in attack
