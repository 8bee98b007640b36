"""bench.targets and bench.upstream on real sockets and processes (no cgroups needed)."""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
import time
from pathlib import Path

from bench import targets, upstream
from cityref_tools import readiness
from cityref_tools.processes import free_port


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_first_response_waits_for_a_server_and_gives_up_on_a_dead_one():
    port = free_port()
    server = http.server.HTTPServer(("127.0.0.1", port), _Quiet)
    threading.Timer(0.3, server.serve_forever).start()
    try:
        t = readiness.first_response(f"http://127.0.0.1:{port}/health", time.time() + 5)
        assert t is not None
    finally:
        server.shutdown()
        server.server_close()
    assert readiness.first_response(f"http://127.0.0.1:{free_port()}/", time.time() + 5, alive=lambda: False) is None


def test_proc_meter_counts_cpu_and_memory_of_live_processes():
    proc = subprocess.Popen(["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
    meter = targets.ProcMeter(lambda: [os.getpid(), proc.pid])
    first = meter.sample()
    proc.wait()
    second = meter.sample()
    assert first.memory_bytes > 0 and first.memory_peak_bytes >= first.memory_bytes
    assert second.cpu_ns >= 0 and first.cpu_ns > 0


def test_es_pids_prefers_the_pid_file_and_falls_back_to_a_scan(tmp_path):
    proc_dir = tmp_path / "proc"
    for pid, cmdline in [(11, b"java\0" + upstream.ES_MAIN_CLASS + b"\0"), (12, b"sleep\0")]:
        (proc_dir / str(pid)).mkdir(parents=True)
        (proc_dir / str(pid) / "cmdline").write_bytes(cmdline)
    pidfile = tmp_path / "es.pid"
    pidfile.write_text("12\n")  # a stale pid file naming another process
    assert upstream.es_pids(pidfile, proc_dir) == [11]
    pidfile.write_text("11\n")
    assert upstream.es_pids(pidfile, proc_dir) == [11]
    assert upstream.es_pids(Path(tmp_path / "none"), proc_dir) == [11]


def test_es_ready_is_false_when_nothing_listens():
    assert upstream.es_ready(f"http://127.0.0.1:{free_port()}") is False
