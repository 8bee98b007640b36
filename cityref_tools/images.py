"""What the harnesses need to know of a service image: its entrypoint, and that entrypoint without the
JVM's AOT cache (the "no AOT" variants of the JVM images in the benchmark and the startup budget)."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess

AOT_CACHE_OPTION = "-XX:AOTCache="


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
