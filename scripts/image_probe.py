"""Startup time and idle memory of one service image, as `make test-images` reports them.

    image_probe.py --podman P --image I --es-url U --json OUT   run the image once and measure
    image_probe.py --table FILE...                              print the results as a table

The container runs as in the benchmark: --cpus 1.5 --memory 512m (no swap), host network.
Startup is timed from just before `podman run` to the first 200 of a city lookup (launch, i.e.
what an orchestrator waits for) and from the container's own start (State.StartedAt, i.e.
without podman's setup). Idle memory is the container cgroup's memory usage (v1
memory.usage_in_bytes, v2 memory.current) two seconds after 50 requests; "rss" is the
service process's VmRSS. Each figure is the median of --runs fresh containers (default 3). With
--add-host and a host name in --es-url, it also shows that the image resolves names.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cityref_tools import cgroup, descriptors, images
from cityref_tools.procfs import rss_kib


def get(port: int, path: str = images.FIRST_PATH, timeout: float = 1.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def probe_once(args: argparse.Namespace) -> dict:
    podman = args.podman.split()
    options = ["-e", f"ELASTICSEARCH_URL={args.es_url}", *(f"--add-host={h}" for h in args.add_host)]
    with images.first_200(podman, args.image, options) as c:
        started = images.parse_time(c.state["StartedAt"]) if "StartedAt" in c.state else None
        pid = c.state["Pid"]
        for _ in range(50):
            get(c.port)
        time.sleep(2)
        try:
            memory = cgroup.of_pid(pid).sample().memory_bytes
        except (OSError, RuntimeError):
            memory = None  # no cpu and memory cgroup visible to us
        rss = rss_kib(pid)
        t_stop = time.time()
        subprocess.run(podman + ["stop", "-t", "15", c.name], check=True, stdout=subprocess.DEVNULL)
        stop_s = time.time() - t_stop
    return {
        "startup_launch_s": round(c.first_200 - c.launched, 4),
        "startup_container_s": round(c.first_200 - started, 4) if started else None,
        "idle_memory_bytes": memory,
        "idle_rss_kib": rss,
        "stop_s": round(stop_s, 3),
    }


def probe(args: argparse.Namespace) -> dict:
    """args.runs fresh containers; the median of each figure, and every run's figures."""
    runs = [probe_once(args) for _ in range(args.runs)]
    size = int(
        subprocess.run(
            args.podman.split() + ["image", "inspect", "--format", "{{.Size}}", args.image],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    result: dict = {"image": args.image, "size_bytes": size, "limits": " ".join(images.LIMITS)}
    for key in runs[0]:
        values = [r[key] for r in runs if r[key] is not None]
        result[key] = statistics.median(values) if values else None
    result["runs"] = runs
    return result


# The startup and size targets of the JVM images, under the benchmark's limits: first 200 within
# 0.5 s of launch, at most 100 MB. Reported beside the figures, not asserted (timings vary by machine).
JVM_TARGETS = {"size_mb": 100.0, "launch_s": 0.5}


def targets(image: str) -> dict | None:
    """The targets of ``image`` (localhost/cityref/<service>:<tag>): the JVM ones for a Java or Kotlin
    service's descriptor, None for the others (they are compared with their own earlier figures)."""
    name = image.rsplit("/", 1)[-1].split(":", 1)[0]
    path = descriptors.path_of(name)
    if not path.exists():
        return None
    return JVM_TARGETS if descriptors.runs_on_jvm(descriptors.load(path)) else None


def verdict(r: dict) -> str:
    t = targets(r["image"])
    if t is None:
        return "-"
    misses = []
    if r["size_bytes"] / 1e6 > t["size_mb"]:
        misses.append(f"size > {t['size_mb']:.0f} MB")
    if r["startup_launch_s"] > t["launch_s"]:
        misses.append(f"launch > {t['launch_s'] * 1000:.0f} ms")
    return "met" if not misses else "missed: " + ", ".join(misses)


def table(files: list[str]) -> None:
    print(
        f"{'image':40} {'size':>9} {'startup (launch)':>17} {'startup (in container)':>23} "
        f"{'idle memory':>12} {'idle RSS':>9}  target (JVM: <= {JVM_TARGETS['size_mb']:.0f} MB, "
        f"launch <= {JVM_TARGETS['launch_s'] * 1000:.0f} ms)"
    )
    for f in files:
        r = json.loads(Path(f).read_text())
        mem = f"{r['idle_memory_bytes'] / 2**20:.1f} MiB" if r["idle_memory_bytes"] else "n/a"
        rss = f"{r['idle_rss_kib'] / 1024:.1f} MiB" if r["idle_rss_kib"] else "n/a"
        inside = f"{r['startup_container_s'] * 1000:.0f} ms" if r["startup_container_s"] is not None else "n/a"
        print(
            f"{r['image']:40} {r['size_bytes'] / 1e6:6.1f} MB {r['startup_launch_s'] * 1000:14.0f} ms "
            f"{inside:>23} {mem:>12} {rss:>9}  {verdict(r)}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--podman", default="podman")
    p.add_argument("--image")
    p.add_argument("--es-url")
    p.add_argument("--json")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--add-host",
        action="append",
        default=[],
        metavar="NAME:IP",
        help="an /etc/hosts entry in the container (to reach Elasticsearch by name)",
    )
    p.add_argument("--table", nargs="+")
    args = p.parse_args()
    if args.table:
        table(args.table)
        return
    result = probe(args)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    table([args.json])


if __name__ == "__main__":
    sys.exit(main())
