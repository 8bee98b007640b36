"""What the harnesses need to know of a service image: its entrypoint, and that entrypoint without the
JVM's AOT cache (the "no AOT" variants of the JVM images in the benchmark and the startup budget); and
one container of it started under the benchmark's limits until its first 200 (image_probe.py and
startup_budget.py)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .processes import free_port
from .readiness import first_response

AOT_CACHE_OPTION = "-XX:AOTCache="
# The benchmark's limits for one container, and the request whose first 200 ends its startup.
LIMITS = ["--cpus", "1.5", "--memory", "512m", "--memory-swap", "512m"]
FIRST_PATH = "/city/v1/get?id=1&language=en"


def entrypoint(podman: list[str], ref: str) -> list[str]:
    """The image's ENTRYPOINT (exec form) as podman records it."""
    out = subprocess.run(podman + ["image", "inspect", ref], check=True, capture_output=True, text=True).stdout
    config = json.loads(out)[0].get("Config") or {}
    return list(config.get("Entrypoint") or [])


def without_aot(argv: list[str]) -> list[str] | None:
    """``argv`` without its ``-XX:AOTCache=…`` option; None when it has none (not a JVM image with a cache)."""
    kept = [a for a in argv if not a.startswith(AOT_CACHE_OPTION)]
    return kept if len(kept) < len(argv) else None


def with_jvm_options(argv: list[str], options: list[str]) -> list[str]:
    """``argv`` (a ``java … -jar x.jar`` entrypoint) with ``options`` added just before ``-jar``, i.e. after
    the image's own options (an ``-Xlog:disable`` there would otherwise switch them off)."""
    if "-jar" not in argv:
        raise ValueError(f"not a java -jar entrypoint: {argv}")
    at = argv.index("-jar")
    return argv[:at] + options + argv[at:]


def parse_time(s: str) -> float:
    """An RFC 3339 time with any fraction as a time.time() value: podman's State.StartedAt (nanoseconds,
    2026-11-22T00:34:29.123456789Z) or a service's log `ts` (milliseconds)."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", s)
    if not m:
        raise ValueError(f"unexpected time {s!r}")
    whole = dt.datetime.fromisoformat(m[1] + (m[3] if m[3] != "Z" else "+00:00"))
    return whole.timestamp() + float("0." + (m[2] or "0"))


@dataclass
class Started:
    name: str  # the container's
    port: int
    launched: float  # time.time() just before `podman run`
    first_200: float  # time.time() of the first 200 of FIRST_PATH
    state: dict  # `podman inspect`'s State


@contextlib.contextmanager
def first_200(podman: list[str], image: str, options: list[str], timeout: float = 60.0) -> Iterator[Started]:
    """``image`` run detached with the host network, under LIMITS, with PORT and ``options`` (more
    `podman run` options: environment, --add-host, --entrypoint), once it has answered FIRST_PATH
    with a 200 (SystemExit after ``timeout`` seconds); the container is removed on leaving."""
    port = free_port()
    name = f"cityref-image-{port}"
    launched = time.time()
    subprocess.run(
        podman
        + ["run", "-d", "--rm", "--pull=never", "--network", "host", "--name", name, "--label", "cityref.test=1"]
        + LIMITS
        + ["-e", f"PORT={port}", *options, image],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        first = first_response(f"http://127.0.0.1:{port}{FIRST_PATH}", launched + timeout, status=200)
        if first is None:
            raise SystemExit(f"{image}: no 200 within {timeout:.0f} s")
        out = subprocess.run(podman + ["inspect", name], check=True, capture_output=True, text=True).stdout
        yield Started(name, port, launched, first, json.loads(out)[0]["State"])
    finally:
        subprocess.run(podman + ["rm", "-f", name], capture_output=True, check=False)
