"""cityref_tools: descriptors, ports, process groups, /proc figures (real processes, no fakes)."""
from __future__ import annotations

import os
import socket
import subprocess

import pytest

from cityref_tools import descriptors, processes, procfs


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


def test_rss_of_a_live_and_a_gone_process():
    assert procfs.rss_kib(os.getpid()) > 0
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert procfs.rss_kib(proc.pid) is None
