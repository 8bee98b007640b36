"""Group `lifecycle`: configuration, startup, logging and shutdown of the process (service/command modes)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conformance import rawhttp
from conformance.fixture import compact
from conformance.logcheck import line_problems, log_level_problems, request_problems
from conformance.proxy import Proxy
from conformance.service import closed_port, inherited

pytestmark = pytest.mark.usefixtures("need_process")

EXIT_WITHIN = 15.0
PRAGUE_EN = compact({"countryIso": "CZ", "id": 1, "isFeatured": True, "name": "Prague", "regionName": "Prague"})


def failed_start_problems(inst, what: str) -> list[str]:
    """A start that must fail: the process exits with status 1 within EXIT_WITHIN (then it is stopped)."""
    rc = inst.wait_exit(EXIT_WITHIN)
    inst.stop()
    if rc is None:
        return [f"{what}: still running {EXIT_WITHIN:g}s after launch"]
    return [f"{what}: exited {rc}, the spec says 1"] if rc != 1 else []


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def test_healthcheck_mode(target, cfg):
    """`<command> healthcheck` (the spec's health check mode): 0 while the service answers
    GET /health on PORT, 1 where nothing listens."""

    def healthcheck(port: int) -> int:
        env = {k: v for k, v in os.environ.items() if inherited(k)}
        env["PORT"] = str(port)
        done = subprocess.run(
            [*cfg.argv, "healthcheck"], cwd=cfg.cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        return done.returncode

    assert healthcheck(target.instance.port) == 0, "healthcheck against the running service did not exit 0"
    assert healthcheck(closed_port()) == 1, "healthcheck against a port nothing listens on did not exit 1"


def test_startup_time(target, record_property):
    """Launch -> first HTTP response of the main instance (reported; the suite waits up to 120 s)."""
    seconds = target.instance.startup_seconds
    record_property("startup_seconds", f"{seconds:.3f}")
    assert seconds is not None


def test_port_logged(target, cfg):
    """Once listening, a log line with an integer field `port` (the descriptor's key) equal to the port."""
    inst, keys = target.instance, cfg.logs
    line = inst.wait_log(
        lambda ln: (o := ln.json()) is not None and is_int(v := keys.get(o, keys.port)) and v == inst.port, timeout=2
    )
    assert line is not None, f"no JSON log line with {keys.port!r}: {inst.port}; output:\n{inst.tail()}"


def test_requests_logged(target, cfg):
    """Every request is logged once, at info, with method, path (with query, as sent), status and
    duration, under the descriptor's keys."""
    inst = target.instance
    probe = uuid.uuid4().hex
    requests = [
        ("GET", f"/city/v1/get?id=%31&language=en&probe={probe}"),
        ("GET", f"/city/v1/get?id=0&probe={probe}"),
        ("HEAD", f"/health?probe={probe}"),
        ("POST", f"/metrics?probe={probe}"),
        ("GET", f"/nope/{probe}?a=%zz"),
    ]
    sent = [(method, tgt, rawhttp.request(inst.base, method, tgt).status) for method, tgt in requests]
    deadline = time.monotonic() + 3
    while True:
        problems = request_problems(inst.snapshot(), sent, cfg.logs)
        if not problems or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not problems, "\n".join(problems)


def test_log_lines_json(target, cfg):
    """Every stdout line of the main instance (everything it logged during the run) is a JSON log line."""
    lines = target.instance.snapshot("stdout")
    assert lines, "the service wrote nothing to stdout"
    problems = line_problems(lines, cfg.logs)
    assert not problems, f"{len(problems)} bad line(s):\n" + "\n".join(problems[:15])


@pytest.mark.parametrize("level", ["warn", "error", "info"])
def test_log_level_is_honoured(cfg, launcher, level):
    """LOG_LEVEL is the lowest level written, from the first line on. An instance started with it,
    behind the proxy, serves a 200 lookup, a 404 path and /health, then a lookup of a city not yet
    requested while the proxy answers 503 (the service answers 503 and may warn); then it is
    stopped and its whole stdout judged: at warn no info/debug line (startup included) and no line
    for a served request; at error no line below error (the 503's warning included); at info
    exactly one info line per request."""
    probe = uuid.uuid4().hex
    served = [
        (f"/city/v1/get?id=1&language=en&probe={probe}", 200),
        (f"/nope/{probe}", 404),
        (f"/health?probe={probe}", 200),
    ]
    # city 2 not yet requested: a city is never cached, so this lookup needs Elasticsearch
    failing = f"/city/v1/get?id=2&language=en&probe={probe}"
    wrong: list[str] = []  # answers other than the scenario needs (reported with the log problems)
    fatal = None
    with Proxy(cfg.es_url) as proxy:
        inst = launcher.make(f"log-level-{level}", env={"LOG_LEVEL": level}, es_url=proxy.url).start()
        try:
            inst.wait_ready()
            for tgt, want in served:
                status = rawhttp.request(inst.base, "GET", tgt).status
                if status != want:
                    wrong.append(f"LOG_LEVEL={level}: GET {tgt} answered {status}, want {want}")
            proxy.set_mode("status", 503, b'{"error":"injected","status":503}')
            try:
                status = rawhttp.request(inst.base, "GET", failing, timeout=15).status
            finally:
                proxy.set_mode("pass")
            if status != 503:
                wrong.append(
                    f"LOG_LEVEL={level}: GET {failing} while Elasticsearch answers 503 answered {status}, want 503"
                    " (the Elasticsearch failure was not exercised)"
                )
        except (RuntimeError, rawhttp.HttpError) as e:
            fatal = str(e)
        finally:
            inst.stop()
    if fatal:
        pytest.fail(f"LOG_LEVEL={level}: {fatal}\noutput:\n{inst.tail()}", pytrace=False)
    problems = wrong + log_level_problems(
        level, inst.snapshot("stdout"), [tgt for tgt, _ in served] + [failing], cfg.logs
    )
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:15])


def test_es_unreachable_exits(launcher, cfg):
    """Elasticsearch unreachable at startup: an error naming the URL (password redacted), exit non-zero in 15 s."""
    port = closed_port()
    password = "pw-" + uuid.uuid4().hex[:8]
    inst = launcher.make("es-unreachable", es_url=f"http://cityref:{password}@127.0.0.1:{port}").start()
    problems = failed_start_problems(inst, "Elasticsearch unreachable")
    lines = inst.snapshot(None)
    named = [
        ln
        for ln in lines
        if ln.stream == "stdout"
        and (o := ln.json())
        and cfg.logs.level_of(o) == "error"
        and f"127.0.0.1:{port}" in ln.text
    ]
    if not named:
        problems.append(f"no error log line naming the URL (127.0.0.1:{port})")
    leaked = [ln for ln in lines if password in ln.text]
    if leaked:
        problems.append(f"the password appears in the output: {leaked[0].text[:200]}")
    problems += line_problems(inst.snapshot("stdout"), cfg.logs)
    assert not problems, "\n".join(problems) + f"\noutput:\n{inst.tail()}"


@pytest.mark.parametrize(
    "var,value",
    [
        ("PORT", "abc"),
        ("PORT", "0"),
        ("PORT", "65536"),
        ("ELASTICSEARCH_URL", "ftp://127.0.0.1:9250"),
        ("ELASTICSEARCH_URL", "not a url"),
        ("ELASTICSEARCH_TIMEOUT_MS", "0"),
        ("ELASTICSEARCH_TIMEOUT_MS", "-5"),
        ("ELASTICSEARCH_TIMEOUT_MS", "abc"),
        ("ELASTICSEARCH_TIMEOUT_MS", "2147483648"),
        ("ELASTICSEARCH_TIMEOUT_MS", "99999999999999999999"),
        ("PORT", "+80"),
        ("LOG_LEVEL", "loud"),
        ("OTEL_TRACES_EXPORTER", "zipkin"),
        ("OTEL_TRACES_EXPORTER", ""),
    ],
    ids=lambda v: str(v),
)
def test_invalid_env(launcher, var, value):
    """An invalid configuration value: exit non-zero at once with a log line naming the variable."""
    inst = launcher.make(f"env-{var}={value}", env={var: value}).start()
    problems = failed_start_problems(inst, f"{var}={value!r}")
    if not [ln for ln in inst.snapshot("stdout") if ln.json() is not None and var in ln.text]:
        problems.append(f"{var}={value!r}: no JSON log line on stdout naming {var}")
    assert not problems, "\n".join(problems) + f"\noutput:\n{inst.tail()}"


def test_bounds_are_accepted(launcher):
    """The largest ELASTICSEARCH_TIMEOUT_MS (2147483647) is valid: the service starts and answers."""
    inst = launcher.make("env-timeout-max", env={"ELASTICSEARCH_TIMEOUT_MS": "2147483647"}).start()
    try:
        inst.wait_ready(60)
        answer = rawhttp.request(inst.base, "GET", "/city/v1/get?id=1&language=en")
        assert answer.status == 200, f"answered {answer.status}\noutput:\n{inst.tail()}"
    finally:
        inst.stop()


def test_startup_check_waits_at_most_10_s(cfg, launcher):
    """An Elasticsearch that never answers at startup, with ELASTICSEARCH_TIMEOUT_MS=60000: the check
    gives up after min(60000, 10000) ms and the service exits with status 1, 10 s after launch
    (plus the runtime's start-up; at most EXIT_WITHIN)."""
    with Proxy(cfg.es_url) as proxy:
        proxy.set_mode("hold")
        started = time.monotonic()
        inst = launcher.make("startup-hold", env={"ELASTICSEARCH_TIMEOUT_MS": "60000"}, es_url=proxy.url).start()
        rc = inst.wait_exit(EXIT_WITHIN)
        seconds = time.monotonic() - started
        inst.stop()
        proxy.set_mode("pass")
    assert rc == 1, (
        f"exit {rc} ({seconds:.1f} s after launch), the spec says 1 after about 10 s\noutput:\n{inst.tail()}"
    )
    assert seconds >= 9.5, f"gave up after {seconds:.1f} s: the check may wait 10 s\noutput:\n{inst.tail()}"


class ShutdownRun:
    """SIGTERM while a request is held in flight by the proxy (recorded once, checked by three tests)."""

    def __init__(self):
        self.response: rawhttp.Response | None = None
        self.error: str | None = None
        self.exit_code: int | None = None
        self.exit_seconds: float | None = None
        self.new_connection: str = ""
        self.setup_problem: str | None = None
        self.tail = ""


@pytest.fixture(scope="module")
def shutdown(cfg, launcher):
    run = ShutdownRun()
    with Proxy(cfg.es_url) as proxy:
        inst = launcher.make("sigterm", env={"ELASTICSEARCH_TIMEOUT_MS": "10000"}, es_url=proxy.url).start()
        try:
            inst.wait_ready()
            warm = rawhttp.request(inst.base, "GET", "/city/v1/get?id=1&language=en")  # caches region 1
            if warm.status != 200:
                run.setup_problem = f"warm-up request answered {warm.status}"
                return run
            proxy.set_mode("hold")
            mark = proxy.mark()

            def client():
                try:
                    run.response = rawhttp.request(inst.base, "GET", "/city/v1/get?id=1&language=en", timeout=30)
                except rawhttp.HttpError as e:
                    run.error = str(e)

            t = threading.Thread(target=client, daemon=True)
            t.start()
            if not proxy.wait_for(lambda ex: len(ex) > mark, timeout=10):
                run.setup_problem = "the in-flight request never reached the backend"
                return run
            t_sig = time.monotonic()
            inst.signal(signal.SIGTERM)
            time.sleep(0.5)
            # a new connection now must not be served
            try:
                r = rawhttp.request(inst.base, "GET", "/health", timeout=1.0, linger=0)
                run.new_connection = f"served: {r.status}"
            except rawhttp.HttpError as e:
                run.new_connection = f"not served ({e})"
            proxy.set_mode("pass")  # release the held backend request
            t.join(timeout=EXIT_WITHIN)
            left = max(0.0, EXIT_WITHIN - (time.monotonic() - t_sig))
            run.exit_code = inst.wait_exit(left)
            run.exit_seconds = time.monotonic() - t_sig if run.exit_code is not None else None
        except (RuntimeError, rawhttp.HttpError) as e:
            run.setup_problem = str(e)
        finally:
            inst.stop()
            run.tail = inst.tail()
    return run


def _need(run: ShutdownRun):
    if run.setup_problem:
        pytest.fail(f"shutdown scenario could not run: {run.setup_problem}\noutput:\n{run.tail}", pytrace=False)


def test_sigterm_inflight_completes(shutdown):
    """A request in flight at SIGTERM completes normally."""
    _need(shutdown)
    r = shutdown.response
    assert r is not None, f"the in-flight request got no response: {shutdown.error}\noutput:\n{shutdown.tail}"
    assert (r.status, r.body) == (200, PRAGUE_EN), f"in-flight request answered {r.status} {r.body[:200]!r}"


def test_sigterm_exits_0(shutdown):
    """After SIGTERM (with a request in flight) the process exits 0 within 15 s."""
    _need(shutdown)
    assert shutdown.exit_code is not None, f"still running {EXIT_WITHIN:g}s after SIGTERM\noutput:\n{shutdown.tail}"
    assert shutdown.exit_code == 0, f"exit code {shutdown.exit_code} after SIGTERM\noutput:\n{shutdown.tail}"


def test_sigterm_stops_accepting(shutdown):
    """After SIGTERM no new connection is served (tried while the in-flight request is held)."""
    _need(shutdown)
    assert shutdown.new_connection.startswith("not served"), (
        f"a new connection after SIGTERM was {shutdown.new_connection}"
    )


def test_sigint_exits_0(launcher):
    """SIGINT: exit 0 within 15 s."""
    inst = launcher.make("sigint").start()
    inst.wait_ready()
    assert rawhttp.request(inst.base, "GET", "/health").status == 200
    inst.signal(signal.SIGINT)
    rc = inst.wait_exit(EXIT_WITHIN)
    inst.stop()
    assert rc is not None, f"still running {EXIT_WITHIN:g}s after SIGINT\noutput:\n{inst.tail()}"
    assert rc == 0, f"exit code {rc} after SIGINT\noutput:\n{inst.tail()}"
