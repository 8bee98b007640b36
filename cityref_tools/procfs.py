"""Figures of a process from /proc (Linux)."""

from __future__ import annotations

import os
import pathlib


def status_kib(pid: int, field: str) -> int | None:
    """A kB field of /proc/<pid>/status (VmRSS, VmHWM, …), None if the process or field is gone."""
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss_kib(pid: int) -> int | None:
    return status_kib(pid, "VmRSS")


def cpu_ns(pid: int) -> int | None:
    """User plus system CPU time of the process (its threads included), None if it is gone."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) * 10**9 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
