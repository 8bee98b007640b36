"""What the harnesses need to know of a service image: its entrypoint, and that entrypoint without the
JVM's AOT cache (the "no AOT" variants of the JVM images in the benchmark and the startup budget)."""

from __future__ import annotations

import json
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
