"""Ports and process groups: every process the tools start runs in its own session, and is stopped
as a group (the service and anything it started)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess


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


def stop_group(proc: subprocess.Popen, timeout: float = 15.0) -> int | None:
    """SIGTERM to the process group, up to ``timeout`` s to exit, then SIGKILL; the exit code."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
    return proc.returncode
