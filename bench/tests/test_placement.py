import subprocess
from pathlib import Path

import pytest

from bench import placement, upstream


def test_plan() -> None:
    assert placement.plan(1, True)["target"] is None
    two = placement.plan(2, True)
    assert (two["target"], two["load"], two["upstream"]) == ("1", "0", "0")  # upstream beside the load generator
    assert placement.plan(3, True)["upstream"] == "2"
    assert placement.plan(8, True) == {
        "target": "1,2",
        "load": "0",
        "upstream": "3,4,5,6,7",
        "note": "8 CPUs: load 0, target 1-2, upstream 3-7",
    }
    assert placement.plan(8, False)["load"] is None and placement.plan(8, False)["upstream"] is None


def test_cpu_list() -> None:
    assert placement.cpu_list({0}) == "0"
    assert placement.cpu_list({0, 1}) == "0-1"
    assert placement.cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"


class FakeTaskset:
    def __init__(self, fail_pids: tuple[int, ...] = ()):
        self.calls: list[list[str]] = []
        self.fail = {str(p) for p in fail_pids}

    def __call__(self, argv: list[str], **kw) -> subprocess.CompletedProcess:
        self.calls.append(argv)
        rc = 1 if argv[-1] in self.fail else 0
        return subprocess.CompletedProcess(argv, rc, "", "no such process" if rc else "")


def test_pinned_moves_every_thread_and_restores() -> None:
    run = FakeTaskset()
    p = placement.Pinned([101, 202], "0", run=run, affinity=lambda pid: {0, 1})
    assert run.calls == [["taskset", "-a", "-p", "-c", "0", "101"], ["taskset", "-a", "-p", "-c", "0", "202"]]
    assert p.record()["restored"] is None
    p.restore()
    assert run.calls[2:] == [["taskset", "-a", "-p", "-c", "0-1", "101"], ["taskset", "-a", "-p", "-c", "0-1", "202"]]
    rec = p.record()
    assert rec == {
        "cpus": "0",
        "pids": [101, 202],
        "previous": {"101": "0-1", "202": "0-1"},
        "restored": True,
        "errors": [],
    }
    p.restore()  # idempotent: stop() may run twice
    assert len(run.calls) == 4


def test_pinned_skips_what_it_could_not_move() -> None:
    def affinity(pid: int) -> set[int]:
        if pid == 3:
            raise ProcessLookupError(3, "No such process")
        return {0, 1}

    run = FakeTaskset(fail_pids=(2,))
    p = placement.Pinned([1, 2, 3], "0", run=run, affinity=affinity)
    assert sorted(p.previous) == [1]
    assert len(p.errors) == 2
    p.restore()
    assert run.calls[-1] == ["taskset", "-a", "-p", "-c", "0-1", "1"] and p.restored


def test_es_pids_checks_the_pid_file_against_proc(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for pid, cmd in (
        (10, b"/usr/bin/sleep\x00100"),
        (20, b"java\x00-m\x00org.elasticsearch.server/org.elasticsearch.bootstrap.Elasticsearch"),
    ):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cmdline").write_bytes(cmd)
    pidfile = tmp_path / "es.pid"
    pidfile.write_text("20")
    assert upstream.es_pids(pidfile, proc) == [20]
    pidfile.write_text("10")  # stale pid file, the pid reused by another process
    assert upstream.es_pids(pidfile, proc) == [20]
    pidfile.unlink()
    assert upstream.es_pids(pidfile, proc) == [20]
    (proc / "20" / "cmdline").write_bytes(b"")
    assert upstream.es_pids(pidfile, proc) == []


@pytest.fixture(autouse=True)
def no_elasticsearch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        upstream.elasticsearch, "get", lambda es, path, body=None, timeout=60: {"cluster_name": "c", "status": "green"}
    )


def test_es_upstream_pins_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeTaskset()
    monkeypatch.setattr(upstream, "es_pids", lambda: [4242])
    monkeypatch.setattr(
        upstream, "Pinned", lambda pids, cpus: placement.Pinned(pids, cpus, run=run, affinity=lambda pid: {0, 1})
    )
    es = upstream.EsUpstream("http://127.0.0.1:9250")
    assert es.pinning()["cpus"] is None
    es.pin("0")
    rec = es.pinning()
    assert rec["cpus"] == "0" and rec["pids"] == [4242] and "taskset -a" in rec["how"]
    es.stop()
    assert run.calls[-1] == ["taskset", "-a", "-p", "-c", "0-1", "4242"]
    assert es.pinning()["restored"] is True


def test_es_upstream_without_a_local_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "es_pids", lambda: [])
    es = upstream.EsUpstream("http://127.0.0.1:9250")
    es.pin("0")
    assert es.pinning() == {"how": "Elasticsearch process not found on this machine: not pinned", "cpus": None}
    es.stop()


def test_es_upstream_unpinned_with_no_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "es_pids", lambda: pytest.fail("--no-pin must not look for the process"))
    es = upstream.EsUpstream("http://127.0.0.1:9250")
    es.pin(None)
    es.stop()
    assert es.pinning() == {"how": "not pinned", "cpus": None}


def test_es_upstream_that_cannot_be_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeTaskset(fail_pids=(4242,))
    monkeypatch.setattr(upstream, "es_pids", lambda: [4242])
    monkeypatch.setattr(
        upstream, "Pinned", lambda pids, cpus: placement.Pinned(pids, cpus, run=run, affinity=lambda pid: {0, 1})
    )
    es = upstream.EsUpstream("http://127.0.0.1:9250")
    es.pin("0")
    es.stop()
    rec = es.pinning()
    assert rec["cpus"] is None and rec["pids"] == [] and "could not be pinned" in rec["how"]
    assert len(run.calls) == 1 and rec["errors"]  # nothing to restore
