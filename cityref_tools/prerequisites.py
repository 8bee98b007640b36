"""Missing prerequisites of the entry points (python -m bench, python -m conformance), one line each.

Every check returns None, or what is missing and the command that fixes it, ``"<what>: <fix>"``.
An entry point gives ``check`` its checks, cheap ones first, as a generator (so that a check runs
only when those before it passed); ``check`` prints the first problem as ``cityref: <what>: <fix>``
on stderr, the format of scripts/lib.sh's need_fail, and returns 2 (0 when nothing is missing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from . import elasticsearch as es

PREFIX = "cityref: "


def check(problems: Iterable[str | None]) -> int:
    """2 after printing the first problem on stderr, 0 when there is none."""
    problem = next(filter(None, problems), None)
    if problem is None:
        return 0
    print(PREFIX + problem, file=sys.stderr)
    return 2


def tool(name: str, fix: str) -> str | None:
    """The command ``name`` is on PATH."""
    return None if shutil.which(name) else f"{name} missing: {fix}"


def root_for_cgroups(who: str, cpus: float, memory_mib: int, fix: str) -> str | None:
    """This process is root, which may create the cgroups that hold the limits."""
    if os.geteuid() == 0:
        return None
    return f"{who} needs root for its cgroups ({cpus:g}-CPU / {memory_mib} MiB limits): {fix}"


def elasticsearch(url: str, fix: str, city_id: int | None = None) -> str | None:
    """Elasticsearch answers at ``url`` (and holds city ``city_id``)."""
    why = es.problem(url, city_id=city_id, timeout=5)
    return f"Elasticsearch at {url} is not usable ({why}): {fix}" if why else None


def image(podman: list[str], ref: str, fix: str) -> str | None:
    """``podman`` (a command line, e.g. scripts/podman.sh) has the image ``ref``."""
    proc = subprocess.run([*podman, "image", "exists", ref], capture_output=True, text=True, check=False)
    if proc.returncode == 1:
        return f"image {ref} not built: {fix}"
    return _relayed(proc)  # scripts/podman.sh's own line when podman is missing


def jdk(java_home_sh: Path, jre: bool = False) -> str | None:
    """scripts/java-home.sh finds a JDK 25+ (a runtime, with ``jre``); else its own line."""
    return _relayed(subprocess.run([str(java_home_sh), *(["--jre"] if jre else [])], capture_output=True, text=True))


def _relayed(proc: subprocess.CompletedProcess) -> str | None:
    """None when a command succeeded, else the last line of what it said (a script's need_fail line)."""
    if proc.returncode == 0:
        return None
    said = proc.stderr.strip().splitlines() or [f"{proc.args[0]} exited {proc.returncode}"]
    return said[-1].removeprefix(PREFIX)
