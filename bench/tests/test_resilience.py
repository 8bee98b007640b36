"""The resilience harness's arithmetic and its clients, against local sockets (no service, no load tool)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from bench import resilience as R
from bench.resilience import clients, faults, warm
from bench.resilience import report as resilience_report
from bench.resilience.config import Profile
from bench.resilience.faults import Row
from bench.resilience.scenario import Ctx


def rows(*spec: tuple[float, float, int]) -> list[Row]:
    return [
        Row(sent, done, code, "" if code else 'Get "http://x": dial tcp 127.0.0.1:1: connect: connection refused')
        for sent, done, code in spec
    ]


def test_parse_rows_reads_vegeta_csv():
    text = '1000000000,200,5000000,0,89,,,,0,GET,http://x,\n2000000000,0,1000000,0,0,"dial tcp: refused",,,1,GET,u,\n'
    a, b = faults.parse_rows(text)
    assert (a.sent, a.code) == (1.0, 200) and a.done == pytest.approx(1.005)
    assert (b.code, b.error) == (0, "dial tcp: refused")


def test_answers_counts_statuses_and_socket_errors_apart():
    a = faults.answers(rows((0, 0.010, 503), (0, 0.020, 503), (0, 0.001, 0)))
    assert a["by_status"] == {"503": 2}
    assert a["socket_errors"] == 1 and a["socket_errors_detail"] == {"connect: connection refused": 1}
    assert a["p99_ms"] == pytest.approx(20) and a["requests"] == 3


def test_recovery_is_when_answers_stay_200():
    # the upstream returns at t=10; 503s complete until 10.45, then only 200s (100 per 0.1 s bin)
    rs = rows(*[(9.9, 10.0 + i / 10, 503) for i in range(5)], *[(10.5, 10.5 + i / 1000, 200) for i in range(1000)])
    assert faults.recovery_s(rs, 10.0) == pytest.approx(0.5)
    # more time observed afterwards does not shorten it
    longer = rs + rows(*[(11.5, 11.5 + i / 1000, 200) for i in range(5000)])
    assert faults.recovery_s(longer, 10.0) == pytest.approx(0.5)
    # one 503 among a bin's 100 200s is within the 1 %
    assert faults.recovery_s(rs + rows((11, 11.05, 503)), 10.0) == pytest.approx(0.5)
    # at once: 0; never recovered (the last bin is bad): None
    assert faults.recovery_s(rows((10, 10.01, 200)), 10.0) == 0.0
    assert faults.recovery_s(rows((10, 10.1, 503), (10, 10.2, 503)), 10.0) is None


def test_fault_figures_windows_by_send_time():
    rs = rows(
        (0.5, 0.6, 200),
        (0.9, 1.5, 503),
        (1.05, 1.06, 200),
        (1.2, 1.21, 503),
        (2.95, 2.96, 200),
        (3.2, 3.21, 200),
        (2.5, 3.1, 200),  # sent during the fault, waited past its end: answered after it
    )
    marks = {"fault_on": (1.0, 1.1), "fault_off": (2.9, 3.0)}

    class NoSamples:
        samples: list = []

        def window(self, a, b):
            return []

    f = faults.fault_figures(rs, marks, NoSamples(), 0, 4)
    # sent while the fault was being set up or taken down: in neither window
    assert f["before"]["by_status"] == {"200": 1}
    assert f["in_flight"]["by_status"] == {"503": 1}
    assert f["during"]["by_status"] == {"503": 1, "200": 1} and f["during"]["p99_ms"] == pytest.approx(600)
    assert f["during_answered"]["by_status"] == {"503": 1}
    assert f["during_answered_after"]["by_status"] == {"200": 1}
    assert f["after"]["by_status"] == {"200": 1}
    assert f["fault_s"] == pytest.approx(1.8)


class Server:
    """A listener on 127.0.0.1 with a per-connection behaviour."""

    def __init__(self, handle):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.handle = handle
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(c,), daemon=True).start()

    def close(self):
        self.sock.close()


def answer_head(c: socket.socket) -> None:
    """A connection that begins with a HEAD request gets its answer (the "after a request" clients)."""
    if c.recv(4, socket.MSG_PEEK) == b"HEAD":
        got = b""
        while b"\r\n\r\n" not in got:
            got += c.recv(1)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")


def cut_with_408(c: socket.socket, after_s: float, headers: bytes, linger_s: float) -> None:
    """A head timeout: read whatever comes for `after_s`, answer 408, close after `linger_s`."""
    c.settimeout(0.05)
    end = time.time() + after_s
    while time.time() < end:
        with contextlib.suppress(TimeoutError):
            c.recv(100)
    c.sendall(b"HTTP/1.1 408 Request Timeout\r\n" + headers + b"\r\n")
    c.shutdown(socket.SHUT_WR)
    time.sleep(linger_s)
    c.close()


def test_slow_clients_measures_how_long_the_server_holds_them():
    def cut_after(c):  # a header timeout of 0.6 s (reading what comes meanwhile), answered 408
        answer_head(c)
        cut_with_408(c, 0.6, b"Connection: close\r\n", 0.3)

    s = Server(cut_after)
    try:
        out = clients.slow_clients(s.port, "/x", 7, 0.2, 3, threading.Event())
    finally:
        s.close()
    assert out["closed_by_server"] == 7 and out["still_open_at_end"] == 0
    assert out["closed_with"] == {"408": 7}
    assert 0.5 < out["held_s_median"] < 1.5
    assert out["by_mode"]["fresh"]["closed_by_server"] == 3
    assert out["by_mode"]["after a request"]["closed_by_server"] == 2
    assert out["by_mode"]["silent"]["closed_by_server"] == 2


def test_slow_clients_after_a_first_request():
    def answer_then_cut(c):  # answers a first request, then a 0.4 s deadline for the next head
        if c.recv(4, socket.MSG_PEEK) != b"HEAD":
            time.sleep(5)  # the others are held
            return
        answer_head(c)
        cut_with_408(c, 0.4, b"", 0.2)

    s = Server(answer_then_cut)
    try:
        out = clients.slow_clients(s.port, "/x", 6, 0.1, 1.5, threading.Event())
    finally:
        s.close()
    after = out["by_mode"]["after a request"]
    assert after["connections"] == 2 and after["refused"] == 0 and after["closed_with"] == {"408": 2}
    assert out["by_mode"]["fresh"]["still_open_at_end"] == 2 and out["by_mode"]["silent"]["still_open_at_end"] == 2
    assert 0.3 < after["held_s_median"] < 1.0


def test_slow_clients_held_past_the_watch():
    def keep(c):
        answer_head(c)
        time.sleep(5)

    s = Server(keep)
    try:
        out = clients.slow_clients(s.port, "/x", 3, 0.2, 0.8, threading.Event())
    finally:
        s.close()
    assert out["still_open_at_end"] == 3 and out["held_s_median"] is None


def test_hostile_sender_cut_read_all_and_stalled():
    def cut(c):  # reads 1 MiB, answers 431 and closes
        got = 0
        while got < 2**20:
            got += len(c.recv(65536))
        c.sendall(b"HTTP/1.1 431 Too Large\r\n\r\n")
        c.close()

    def drain(c):
        while c.recv(1 << 20):
            pass

    def stall(c):
        time.sleep(10)

    for handle, kind, outcome in (
        (cut, "method token", "cut"),
        (drain, "body", "read all"),
        (stall, "header line", "stalled"),
    ):
        s = Server(handle)
        try:
            h = clients.hostile(s.port, kind, 16 * 2**20, 0.5)
        finally:
            s.close()
        assert h["outcome"] == outcome, (kind, h)
        if outcome == "cut":
            assert h["bytes_sent"] < 16 * 2**20 and h["status"] == "431"
        if outcome == "read all":
            assert h["bytes_sent"] == 16 * 2**20


def result(**over) -> dict:
    ans = {
        "requests": 10,
        "by_status": {"503": 10},
        "socket_errors": 0,
        "socket_errors_detail": {},
        "p50_ms": 1.0,
        "p99_ms": 2.0,
        "max_ms": 3.0,
    }
    ok = ans | {"by_status": {"200": 10}}
    res = {"before": {"working_set_bytes": 1, "fds": 1, "threads": 1}, "during_max": {}, "after": {}}
    fault = {
        "connections": 64,
        "before": ok,
        "during": ans,
        "after": ok,
        "recovery_s": 0.2,
        "observed_after_s": 5,
        "resources": res,
        "alive": True,
        "fault_s": 10,
    }
    slices = [{"rps": 100, "errors": 0, "p99_ms": 10, "working_set_bytes": 100, "fds": 10, "threads": 4}] * 2
    rec = {
        "target": "svc",
        "kind": "bare",
        "status": "ok",
        "reason": None,
        "outage": [fault, fault | {"connections": 2048}],
        "slow_upstream": fault | {"during": ans | {"by_status": {"504": 3}, "p99_ms": 2001}},
        "clients": {
            "normal_load": {
                "alone": {"rps": 1, "errors": 0, "p99_ms": 1},
                "with_slow_clients": {"rps": 1, "errors": 0, "p99_ms": 1},
                "with_hostile_senders": {"rps": 1, "errors": 0, "p99_ms": 1},
            },
            "slow_clients": {
                "connections": 4,
                "refused": 0,
                "closed_by_server": 4,
                "still_open_at_end": 0,
                "held_s_median": 5.0,
                "held_s_max": 5.1,
                "closed_with": {"408": 4},
                "watched_s": 30,
                "resources_max": {"working_set_bytes": 2**20},
            },
            "hostile": {
                "senders": [
                    {"kind": k, "outcome": "cut", "bytes_sent": 70000, "status": "431", "size": 64 * 2**20}
                    for k in clients.HOSTILE
                ],
                "resources_max": {},
            },
            "alive": True,
        },
        "soak": {
            "slices": slices,
            "drift": {"working_set_bytes": 0, "fds": 0, "threads": 0, "errors": 0, "p99_ms": 0, "rps": 0},
            "alive": True,
        },
    }
    return rec | over


def test_words_and_check_and_report():
    rec = result()
    text = R.words(rec)
    assert "outage: only 503s" in text and "recovers in 200 ms/200 ms" in text
    assert "slow upstream: only 504s" in text and "cuts slow clients after 5.0 s" in text
    assert "64.0 MiB senders: method token cut after 68 KiB" in text
    rec["words"] = text
    doc = {"schema": R.SCHEMA, "profile": {"soak_minutes": 2}, "resilience": [rec]}
    assert R.check(doc) == []
    bad = result(soak=None)
    bad["outage"][0] = bad["outage"][0] | {"during": bad["outage"][0]["during"] | {"requests": 0}}
    problems = R.check({"schema": R.SCHEMA, "profile": {"soak_minutes": 2}, "resilience": [bad]})
    assert any("no soak" in p for p in problems) and any("during the outage" in p for p in problems)
    assert "svc: outage" in resilience_report.text(doc)


def test_words_say_what_went_wrong():
    rec = result()
    rec["outage"][1] = rec["outage"][1] | {
        "recovery_s": None,
        "during": rec["outage"][1]["during"] | {"socket_errors": 3},
    }
    rec["clients"]["slow_clients"] |= {"closed_by_server": 0, "still_open_at_end": 4, "held_s_median": None}
    text = R.words(rec)
    assert "outage: not only 503s" in text and "does not recover" in text and "holds slow clients ≥ 30 s" in text


def test_a_death_is_a_finding_not_a_harness_failure():
    rec = result(soak=None, clients=None)
    rec["died"] = [{"phase": "straight to Elasticsearch", "scenario": "soak", "detail": "wrk: connection refused"}]
    rec["skipped"] = []
    doc = {"schema": R.SCHEMA, "profile": {"soak_minutes": 2}, "resilience": [rec]}
    # the soak is explained by the death; the clients are not
    assert R.check(doc) == ["svc: no clients figures"]
    assert R.words(rec).startswith("DIES in soak (straight to Elasticsearch)")


def test_markdown_tables():
    rec = result()
    rec["clients"]["slow_clients"]["by_mode"] = {
        "fresh": rec["clients"]["slow_clients"] | {"held_s_median": 4.8},
        "silent": rec["clients"]["slow_clients"] | {"closed_by_server": 0, "still_open_at_end": 4},
    }
    doc = {
        "profile": {
            "outage_connections": [64, 2048],
            "hostile_bytes": 64 * 2**20,
            "soak_connections": 2048,
            "load_connections": 64,
        },
        "resilience": [rec, {"target": "gone", "status": "failed", "reason": "did not start"}],
    }
    md = resilience_report.markdown(doc)
    assert "| svc | 503×10 (2 ms) | 503×10 (2 ms) | 0.20 s / 0.20 s | 504×3 (2.00 s) | yes |" in md
    assert "| gone | did not start |" in md
    assert "| svc | 4.8 s / ≥ 30 s | cut at 0.1 MiB (431) / cut at 0.1 MiB (431) / cut at 0.1 MiB (431) |" in md
    assert "of warm-up" not in md  # a run without a warm-up record (fixed warm-up)
    rec["warmup"] = {"mode": "stable", "converged": True, "seconds": 45.2}
    assert " (after 45 s of warm-up) |" in resilience_report.markdown(doc)
    rec["warmup"] = {"mode": "stable", "converged": False, "seconds": 90.1}
    assert " (warm-up unsettled at its cap, 90 s) |" in resilience_report.markdown(doc)


def warm_ctx(monkeypatch: pytest.MonkeyPatch, cpu_us: list[float], cap_s: float = 60.0):
    """A Ctx whose target's cgroup spends `cpu_us[i]` µs per request in window i of 100 requests in
    1 s (wrk and the cgroup replaced), and the wrk calls made."""
    from types import SimpleNamespace

    from bench.targets import CgroupMeter
    from cityref_tools.cgroup import Sample

    calls: list[tuple[int, float]] = []
    cpu = {"ns": 0, "i": 0}

    class Group:
        def sample(self) -> Sample:
            return Sample(cpu["ns"], 2**20, 2**20, 0, 0, 0)

    def run_wrk(url, n, seconds, env, cpus, timeout_s):
        calls.append((n, seconds))
        cpu["ns"] += int(cpu_us[min(cpu["i"], len(cpu_us) - 1)] * 1000 * 100)
        cpu["i"] += 1
        return {"duration_s": 1.0, "successes": 100, "status_errors": 0, "socket_errors": 0}

    monkeypatch.setattr(warm.load, "run_wrk", run_wrk)
    profile = Profile("t", 2, 8, [8], 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, warm_cap_s=cap_s, warm_window_s=1.0)
    running = SimpleNamespace(meter=CgroupMeter(Group()), url="http://127.0.0.1:1", path="/x?id=%d")
    cfg = SimpleNamespace(profile=profile, timeout_s=5, city_id=3)
    ctx = Ctx(cfg, running, None, None, None, lambda _msg: None)
    return ctx, calls


def test_the_warm_up_runs_until_the_cpu_per_request_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A JIT's warm-up: dear windows first, then a level; the warm-up ends once 3 windows agree with
    the 3 before them, not after a fixed time."""
    ctx, calls = warm_ctx(monkeypatch, [900, 600, 400, 300, 200, 200, 200, 200, 200, 200])
    out = warm.warm_until_stable(ctx)
    assert out["converged"] and out["mode"] == "stable"
    assert out["windows"] == 9 and len(calls) == 9 and calls[0] == (8, 1.0)
    assert out["window_cpu_us_per_request"][-1] == pytest.approx(200.0)
    assert out["window_rps"] == [100.0] * 9


def test_the_warm_up_stops_at_its_cap_unsettled(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, calls = warm_ctx(monkeypatch, [900 - 50 * i for i in range(20)], cap_s=10.0)
    out = warm.warm_until_stable(ctx)
    assert not out["converged"] and out["capped"] and len(calls) == 10


def test_a_third_of_the_warm_up_is_still_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the phase through the proxy: warm_s / 3 of load, no windows."""
    ctx, calls = warm_ctx(monkeypatch, [200])
    monkeypatch.setattr(warm, "wrk_figures", lambda m: {"successes": m["successes"]})
    assert warm.warm(ctx, 1 / 3) == {"successes": 100}
    assert calls == [(8, 1.0)]


def test_without_a_cap_the_first_warm_up_is_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The smoke profile (warm_cap_s 0): warm_s of load, no windows."""
    ctx, calls = warm_ctx(monkeypatch, [200], cap_s=0.0)
    monkeypatch.setattr(warm, "wrk_figures", lambda m: {"successes": m["successes"]})
    assert warm.warm_until_stable(ctx) == {"successes": 100}
    assert calls == [(8, 2.0)]
