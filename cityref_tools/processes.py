"""Ports and process groups: every process the tools start runs in its own session, and is stopped
as a group (the service and anything it started)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now on ``host`` (bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start_session(argv: list[str], **popen) -> subprocess.Popen:
    """``argv`` in a new session (its own process group), stdin closed, no inherited descriptors."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(argv, start_new_session=True, close_fds=True, **popen)


def kill_group(pid: int) -> None:
    """SIGKILL to the process group led by ``pid``, if any is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is left (one not yet reaped counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(proc: subprocess.Popen, timeout: float = 15.0, linger: float = 2.0) -> int | None:
    """SIGTERM to the process group, up to ``timeout`` s for its leader to exit, then SIGKILL; then
    SIGKILL to whatever is left of the group (children that ignore SIGTERM), waiting up to ``linger``
    s until none is left. The leader's exit code."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
    deadline = time.monotonic() + linger
    while group_alive(proc.pid) and time.monotonic() < deadline:
        kill_group(proc.pid)
        time.sleep(0.02)
    return proc.returncode
