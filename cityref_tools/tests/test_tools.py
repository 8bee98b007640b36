"""cityref_tools: descriptors, ports, process groups, /proc figures, readiness and Elasticsearch
probes (real processes and a real HTTP server, no fakes)."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import threading
import time

import pytest

from cityref_tools import descriptors, elasticsearch, images, processes, procfs, readiness


def test_every_descriptor_is_valid_and_named_after_its_directory():
    for path in descriptors.paths():
        assert descriptors.load(path)["name"] == path.parent.name
    assert [d["name"] for d in descriptors.all_services()] == sorted(p.parent.name for p in descriptors.paths())


@pytest.mark.parametrize("text", ["- a\n", "name: x\n", "name: x\nlanguage: l\nframework: f\nbuild: b\ncommand: run\n"])
def test_invalid_descriptors(tmp_path, text):
    path = tmp_path / "cityref.yaml"
    path.write_text(text)
    with pytest.raises(descriptors.DescriptorError):
        descriptors.load(path)


def test_the_jvm_services_are_told_apart_by_their_language():
    jvm = {d["name"] for d in descriptors.all_services() if descriptors.runs_on_jvm(d)}
    assert {"kotlin-ktor", "kotlin-http4k", "java-helidon"} <= jvm
    assert not jvm & {"rust-actix", "go-kit"}


def test_an_entrypoint_without_its_aot_cache_and_with_more_jvm_options():
    argv = ["/opt/jre/bin/java", "@/app/jvm.args", "-XX:AOTCache=/app/cityref.aot", "-jar", "/app/x.jar"]
    assert images.without_aot(argv) == ["/opt/jre/bin/java", "@/app/jvm.args", "-jar", "/app/x.jar"]
    assert images.without_aot(["/cityref"]) is None  # no cache: not a JVM image with one
    assert images.with_jvm_options(argv, ["-Xlog:startuptime"]) == [
        "/opt/jre/bin/java",
        "@/app/jvm.args",
        "-XX:AOTCache=/app/cityref.aot",
        "-Xlog:startuptime",
        "-jar",
        "/app/x.jar",
    ]
    with pytest.raises(ValueError):
        images.with_jvm_options(["/cityref"], ["-Xlog:startuptime"])


def test_container_and_log_times_are_read_to_their_fraction():
    assert images.parse_time("1970-01-01T00:00:01.5Z") == 1.5
    assert images.parse_time("1970-01-01T00:00:01.123456789Z") == pytest.approx(1.123456789)
    assert images.parse_time("1970-01-01T01:00:00+01:00") == 0.0
    with pytest.raises(ValueError):
        images.parse_time("yesterday")


def test_a_free_port_can_be_bound():
    port = processes.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_group_is_stopped_with_its_children():
    # a shell that ignores SIGTERM's default for itself is still stopped: SIGKILL after the timeout
    proc = processes.start_session(["sh", "-c", "trap '' TERM; sleep 30 & sleep 30"], stdout=subprocess.DEVNULL)
    assert os.getpgid(proc.pid) == proc.pid
    assert processes.stop_group(proc, timeout=0.5) is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)


def test_a_child_that_ignores_sigterm_goes_with_its_leader():
    # the leader exits on SIGTERM at once; its child ignores SIGTERM and is SIGKILLed after it
    proc = processes.start_session(["sh", "-c", "(trap '' TERM; sleep 30) & wait"], stdout=subprocess.DEVNULL)
    time.sleep(0.2)  # the subshell has set its trap
    assert processes.stop_group(proc, timeout=5) is not None
    assert not processes.group_alive(proc.pid)


def test_rss_of_a_live_and_a_gone_process():
    assert procfs.rss_kib(os.getpid()) > 0
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert procfs.rss_kib(proc.pid) is None


def test_cpu_time_of_a_busy_and_a_gone_process():
    start = procfs.cpu_ns(os.getpid())
    sum(i * i for i in range(2_000_000))
    assert procfs.cpu_ns(os.getpid()) > start
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert procfs.cpu_ns(proc.pid) is None


class _Answers(http.server.BaseHTTPRequestHandler):
    """503 for a server's first request, then 200 (a service warming up); the body says
    {"found": true} from the fourth request on (a document loaded meanwhile)."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.server.count += 1
        body = json.dumps({"found": self.server.count > 3}).encode()
        self.send_response(503 if self.server.count == 1 else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def warming_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    server.count = 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_readiness_waits_for_the_wanted_status(warming_server):
    url = f"http://127.0.0.1:{warming_server.server_port}/health"
    assert readiness.first_response(url, time.time() + 5, status=200) is not None
    assert warming_server.count == 2


def test_readiness_gives_up_when_the_process_is_gone():
    url = f"http://127.0.0.1:{processes.free_port()}/health"
    assert readiness.first_response(url, time.time() + 5, alive=lambda: False) is None


def test_elasticsearch_problems(warming_server):
    es = f"http://127.0.0.1:{warming_server.server_port}"
    assert "503" in elasticsearch.problem(es)  # an error status is a problem
    assert "city 7 is missing" in elasticsearch.problem(es, city_id=7)  # up, but {"found": false}
    assert elasticsearch.problem(es, city_id=7) is None  # up and found
    assert elasticsearch.problem(f"http://127.0.0.1:{processes.free_port()}") is not None
