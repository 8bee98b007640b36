"""A death is a finding with its evidence: exit code, OOM verdict and log tail, from real processes and
cgroups (bench/targets.py), kept by the resilience run and shown in its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import load, targets
from bench import resilience as R
from bench.resilience import phases
from bench.resilience import report as resilience_report
from bench.resilience.scenario import evidence
from bench.resilience.soak import soak
from bench.targets import CgroupMeter, Env, Limits, Running, Target
from cityref_tools import cgroup
from cityref_tools.processes import free_port

MiB = 2**20

# A target in miniature: answers the harness's first request (its startup probe), then does `then`.
SERVER = """
import http.server, os, sys, threading

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        answered.set()

    def log_message(self, *args):
        pass

answered = threading.Event()
server = http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
answered.wait()
"""


def cgroups_or_skip(oom_counter: bool = False) -> None:
    """Skips unless this process may create the targets' cgroups (root, a writable hierarchy) and, with
    `oom_counter`, the kernel keeps the memory controller's OOM kill counter."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the harness creates its targets' cgroups under /sys/fs/cgroup")
    try:
        group = cgroup.create(f"cityref-bench-test-death-{os.getpid()}", 0.5, 64 * MiB)
    except OSError as e:
        pytest.skip(f"cannot create a cgroup here ({e})")
    try:
        events = group.paths["memory"] / "memory.oom_control" if group.version == 1 else group.path / "memory.events"
        if oom_counter and "oom_kill " not in events.read_text():
            pytest.skip(f"{events.name} has no oom_kill counter (Linux < 4.13)")
    finally:
        group.remove()


def start(tmp_path: Path, name: str, then: str, memory_bytes: int = 64 * MiB) -> Running:
    """The miniature target through the harness's bare path: start_in_group (its own cgroup, the log in
    env.logdir) and in_group (the Running of bare and floor targets)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = Env("http://127.0.0.1:1", Limits(0.5, memory_bytes), None, tmp_path, startup_timeout_s=20)
    argv = [sys.executable, "-u", "-c", SERVER + textwrap.dedent(then)]
    proc, group, startup = targets.start_in_group(name, argv, tmp_path, env, {"PORT": str(port)}, url + "/")
    return targets.in_group(name, proc, group, env, url, startup, {})


def wait_dead(running: Running, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while running.alive() and time.time() < deadline:
        time.sleep(0.05)
    assert not running.alive(), f"still alive after {timeout:g} s"


def test_a_bare_target_that_exits_keeps_its_code_and_the_end_of_its_log(tmp_path: Path) -> None:
    cgroups_or_skip()
    running = start(tmp_path, "test-death-exit", "for i in range(30): print(f'line {i}')\nsys.exit(3)\n")
    try:
        wait_dead(running)
        ev = running.evidence()
        assert ev == {
            "exit_code": 3,
            "oom_killed": False,
            "oom_kills": 0,
            "log_tail": [f"line {i}" for i in range(10, 30)],
            "source": "process",
        }
        assert running.evidence() == ev  # idempotent
    finally:
        running.stop()
    # stop() removed the group; what was read before it stays
    assert targets.oom_kills(running.meter.group) is None
    assert running.evidence() == ev


def test_a_bare_target_killed_for_memory(tmp_path: Path) -> None:
    cgroups_or_skip(oom_counter=True)
    running = start(
        tmp_path,
        "test-death-oom",
        """
        print("allocating 512 MiB")
        block = b"x" * (512 * 2**20)  # written, so charged page by page
        print("survived")
        """,
    )
    try:
        wait_dead(running)
        ev = running.evidence()
    finally:
        running.stop()
    assert ev["exit_code"] in (-9, 137)  # SIGKILL, from the OOM killer
    assert ev["oom_killed"] is True and ev["oom_kills"] >= 1
    assert ev["log_tail"][-1] == "allocating 512 MiB" and ev["source"] == "process"


def test_evidence_of_a_process_without_a_group_and_while_it_runs(tmp_path: Path) -> None:
    log = tmp_path / "svc.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; [print(f'line {i}') for i in range(30)]; sys.stdin.read(); sys.exit(3)",
            ],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    evidence = targets.kept_once_exited(lambda: targets.process_evidence(proc, None, log))
    try:
        live = evidence()
        assert live["exit_code"] is None and live["oom_killed"] is None and live["oom_kills"] is None
    finally:
        proc.communicate(b"")
    ev = evidence()
    assert ev["exit_code"] == 3 and ev["log_tail"] == [f"line {i}" for i in range(10, 30)]
    log.write_text("rewritten\n")
    assert evidence() == ev  # a death's evidence, once read, is kept


def test_log_tail_reads_only_the_end_of_a_large_log(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("".join(f"{'x' * 200} {i}\n" for i in range(5000)) + "last line without a newline")
    tail = targets.log_tail(log)
    assert len(tail) == 20 and tail[-1] == "last line without a newline" and tail[0].endswith(" 4981")
    assert targets.log_tail(tmp_path / "missing.log") == []
    ev = targets.death_evidence(1, None, None, ["y" * 5000] * 30, "process")
    assert len(ev["log_tail"]) == 20 and len(ev["log_tail"][0]) == targets.LOG_LINE_CHARS


INSPECT = """[
 {
  "Id": "6b1e3c0f9d2a4e8b1c7d5f3a2e9b8c4d6f1a3e5b7c9d2f4a6b8c0e1d3f5a7b9c",
  "Created": "2025-06-01T12:00:00.000000000Z",
  "Path": "/app/run",
  "State": {
   "OciVersion": "1.0.2-dev",
   "Status": "exited",
   "Running": false,
   "Paused": false,
   "Restarting": false,
   "OOMKilled": true,
   "Dead": false,
   "Pid": 0,
   "ExitCode": 137,
   "Error": "",
   "StartedAt": "2025-06-01T12:00:00.5Z",
   "FinishedAt": "2025-06-01T12:03:10.2Z"
  },
  "Name": "cityref-bench-40123"
 }
]"""


def test_podman_inspect_of_a_container_killed_for_memory() -> None:
    ev = targets.inspect_evidence(INSPECT, ["Terminating"])
    assert ev == {
        "exit_code": 137,
        "oom_killed": True,
        "oom_kills": None,
        "log_tail": ["Terminating"],
        "source": "podman inspect",
    }
    running = json.loads(INSPECT)
    running[0]["State"] |= {"Status": "running", "Running": True, "OOMKilled": False, "ExitCode": 0}
    assert targets.inspect_evidence(json.dumps(running), [])["exit_code"] is None  # 0 only means "still runs"
    assert targets.inspect_evidence(json.dumps(running), [], kills=2)["oom_killed"] is True  # a process of it
    gone = targets.inspect_evidence("", [])  # removed: podman inspect failed
    assert gone["exit_code"] is None and gone["oom_killed"] is None


def test_container_evidence_through_podman(tmp_path: Path) -> None:
    """The two podman calls, against a stand-in podman that answers like the real one."""
    (tmp_path / "inspect.json").write_text(INSPECT)
    fake = tmp_path / "podman"
    fake.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            echo "$@" >> {tmp_path}/calls
            case "$1" in
              container) [ "$3" = cityref-bench-40123 ] && cat {tmp_path}/inspect.json && exit 0
                         echo "Error: no such container $3" >&2; exit 125 ;;
              logs) [ "$4" = cityref-bench-40123 ] || exit 125
                    seq 6 24 | sed 's/^/log /'; echo "OutOfMemoryError: Java heap space" >&2 ;;
            esac
            """
        )
    )
    fake.chmod(0o755)
    ev = targets.container_evidence("cityref-bench-40123", None, podman_cmd=str(fake))
    assert ev["exit_code"] == 137 and ev["oom_killed"] is True and ev["source"] == "podman inspect"
    assert ev["log_tail"] == [f"log {i}" for i in range(6, 25)] + ["OutOfMemoryError: Java heap space"]
    assert (tmp_path / "calls").read_text().splitlines() == [
        "container inspect cityref-bench-40123",
        "logs --tail 20 cityref-bench-40123",
    ]
    gone = targets.container_evidence("cityref-bench-1", None, podman_cmd=str(fake))
    assert gone == targets.death_evidence(None, None, None, [], "podman inspect")


def test_a_running_made_without_them_is_alive_and_has_no_evidence() -> None:
    running = Running("http://127.0.0.1:1", targets.SERVICE_PATH, targets.Meter(), None, lambda: None)
    assert running.alive() is True and running.evidence() == {}


# -- the resilience run keeps it ------------------------------------------------------------------

EVIDENCE = {
    "exit_code": 137,
    "oom_killed": True,
    "oom_kills": 1,
    "log_tail": [f"line {i} | *not* <b>markup</b>" for i in range(19)] + ["Killed"],
    "source": "process",
}


class GoneGroup:
    """The cgroup of a target that died: every read fails, as when its group was removed."""

    def sample(self):
        raise FileNotFoundError("memory.usage_in_bytes")

    def pids(self) -> list[int]:
        raise FileNotFoundError("cgroup.procs")


class FakeProxy:
    url = "http://127.0.0.1:1"

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self) -> FakeProxy:
        return self

    def __exit__(self, *exc) -> None:
        pass


def test_each_death_in_the_resilience_run_keeps_its_evidence_read_before_the_stop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    starts: list[int] = []
    stops: list[int] = []

    def start(env, first_path):
        """A target that is gone as soon as it started; its evidence, like a container's, is lost at stop()."""
        starts.append(1)
        return Running(
            "http://127.0.0.1:1",
            targets.SERVICE_PATH,
            CgroupMeter(GoneGroup()),
            0.1,
            lambda: stops.append(1),
            alive=lambda: False,
            evidence=lambda: {} if len(stops) == len(starts) else EVIDENCE,
        )

    def gone(*args, **kwargs):
        raise RuntimeError("wrk: connection refused")

    monkeypatch.setattr(phases, "warm_until_stable", gone)
    monkeypatch.setattr(phases, "warm", gone)
    monkeypatch.setattr(phases, "Proxy", FakeProxy)
    cfg = R.Config(R.PROFILES["smoke"], [])
    env = Env("http://127.0.0.1:1", Limits(), None, tmp_path)
    target = Target("svc", "bare", False, start)
    rec = phases.run_target(cfg, target, env, None, tmp_path, SimpleNamespace(show=lambda *a: None))
    assert rec["status"] == "ok" and len(starts) == len(stops) == 2
    assert [(d["scenario"], d["evidence"]) for d in rec["died"]] == [("warmup", EVIDENCE), ("warmup (proxy)", EVIDENCE)]
    assert rec["words"].startswith("DIES in warmup (straight to Elasticsearch), exit 137, killed for memory: wrk:")


def test_a_soak_that_ends_in_a_death_keeps_the_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    state = {"alive": True, "runs": 0}

    def run_wrk(*args):
        state["runs"] += 1
        if state["runs"] > 1:
            state["alive"] = False
            raise RuntimeError("wrk: connection refused")
        return {"duration_s": 1.0, "successes": 10, "status_errors": 0, "socket_errors": 0, "latency_ms": {"p99": 1}}

    monkeypatch.setattr(load, "run_wrk", run_wrk)
    sampler = SimpleNamespace(one=lambda: {"alive": state["alive"]}, window=lambda t0, t1: [])
    running = SimpleNamespace(alive=lambda: state["alive"], evidence=lambda: EVIDENCE)
    cfg = SimpleNamespace(profile=R.PROFILES["smoke"], timeout_s=5)
    ctx = SimpleNamespace(cfg=cfg, url="http://127.0.0.1:1/", load_cpus=None, show=lambda m: None)
    out = soak(SimpleNamespace(**vars(ctx), sampler=sampler, running=running))
    assert out["alive"] is False and len(out["slices"]) == 1 and out["evidence"] == EVIDENCE


def test_the_evidence_waits_for_the_exit_to_be_recorded() -> None:
    answers = iter([True, True, False])
    running = SimpleNamespace(alive=lambda: next(answers), evidence=lambda: EVIDENCE)
    assert evidence(running) == EVIDENCE


def test_the_report_shows_exit_code_verdict_and_log_lines() -> None:
    rec = {
        "target": "svc (image)",
        "kind": "image",
        "status": "ok",
        "reason": None,
        "died": [{"phase": "straight to Elasticsearch", "scenario": "soak", "detail": "gone", "evidence": EVIDENCE}],
        "skipped": [],
    }
    old = rec | {"target": "old", "died": [{"phase": "p", "scenario": "soak", "detail": "gone"}]}  # no evidence
    doc = {
        "profile": {
            "outage_connections": [64],
            "hostile_bytes": 4 * MiB,
            "soak_connections": 64,
            "load_connections": 8,
        },
        "resilience": [rec, old],
    }
    md = resilience_report.markdown(doc)
    assert (
        "| died in soak (exit 137, OOM-killed yes)<br>line 17 \\| \\*not\\* &lt;b>markup&lt;/b>"
        "<br>line 18 \\| \\*not\\* &lt;b>markup&lt;/b><br>Killed |" in md
    )
    assert "| old | – | – | – | died in soak |" in md
    deaths = md.split("Deaths, with the last lines of each log:")[1]
    assert "- **svc (image)** died in soak (straight to Elasticsearch): exit 137, OOM-killed yes (process, " in deaths
    assert all(f"  line {i} | *not* <b>markup</b>\n" in deaths for i in range(19)) and "  Killed\n" in deaths
    assert "old" not in deaths
    assert "exit 137, killed for memory" in R.words(rec)
    assert "Deaths" not in resilience_report.markdown(doc | {"resilience": [old]})  # an older run file
    html = resilience_report._deaths_html(doc["resilience"])  # the HTML report's section
    assert html.startswith("<h2>Deaths</h2>") and "line 0 | *not* &lt;b&gt;markup&lt;/b&gt;" in html
    assert "exit 137, killed for memory (process, OOM kills in its cgroup: 1)" in html and "old" not in html
