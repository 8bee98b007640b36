"""The startup budget of a JVM service image: where the time from `podman run` to the first 200 goes.

    startup_budget.py --podman P --image I --es-url U --json OUT [--runs N]   measure one image
    startup_budget.py --table FILE...                                        the budget tables (Markdown)

Each run starts a fresh container under the benchmark's limits (--cpus 1.5 --memory 512m, no swap,
host network), once with the image's entrypoint and once without its AOT cache (-XX:AOTCache=…
dropped), and polls GET /city/v1/get?id=1&language=en until the first 200. The phases come from
three clocks on the same host:

- podman's setup: from just before `podman run` to the container's State.StartedAt;
- JVM boot: from StartedAt to the service's main(), i.e. the listening log line's time (the key its
  descriptor's `logs` names, conformance/observe.py) minus its
  `startup_ms` (the JVM's own "Create VM" share from -Xlog:startuptime, printed beside it);
- the service's phases, timed inside main() and logged on its listening line (`config_ms`,
  `elasticsearch_client_ms`, `health_check_ms`, `server_ms`; phases may overlap);
- the first request: from the listening line's time to the first 200 at the client.

A separate run per variant logs class loading (-Xlog:class+load) to count the classes loaded by
the first 200 and how many came from the AOT cache; its timings are not used. Every figure is the
median of --runs runs (default 3), with the smallest and largest.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

from cityref_tools import images
from conformance import observe

VARIANTS = ("aot", "no-aot")
PHASES = ("config", "elasticsearch_client", "health_check", "server")
CREATE_VM = re.compile(r"Create VM, ([0-9.]+) secs")
CLASS_LOAD = re.compile(r"^\S+ source: (.*)$")


def run_once(podman: list[str], image: str, argv: list[str], es_url: str) -> dict:
    """One container with ``argv`` as its entrypoint: the times, the listening line and its other output."""
    options = ["-e", f"ELASTICSEARCH_URL={es_url}", "--entrypoint", json.dumps(argv)]
    with images.first_200(podman, image, options) as c:
        logs = subprocess.run(podman + ["logs", c.name], capture_output=True, text=True, check=True)
        subprocess.run(podman + ["stop", "-t", "15", c.name], capture_output=True, check=False)
    lines = (logs.stdout + logs.stderr).splitlines()
    listening = next((json.loads(x) for x in lines if x.startswith("{") and '"listening' in x), None)
    if listening is None:
        raise SystemExit(f"{image}: no listening log line")
    return {
        "t0": c.launched,
        "started": images.parse_time(c.state["StartedAt"]),
        "first": c.first_200,
        "listening": listening,
        "lines": lines,
    }


@functools.cache
def log_keys(image: str) -> observe.LogKeys:
    """The log keys of the service an image holds (localhost/cityref/<service>:<tag>)."""
    return observe.load(image.rsplit("/", 1)[-1].split(":", 1)[0])[0]


def timing_run(podman: list[str], image: str, argv: list[str], es_url: str) -> dict:
    r = run_once(podman, image, images.with_jvm_options(argv, ["-Xlog:startuptime=info:stdout:none"]), es_url)
    line = r["listening"]
    keys = log_keys(image)
    listening_at = images.parse_time(keys.get(line, keys.time))
    main_at = listening_at - line["startup_ms"] / 1000 if "startup_ms" in line else None
    create_vm = next((float(m[1]) for x in r["lines"] if (m := CREATE_VM.search(x))), None)
    out = {
        "podman_ms": (r["started"] - r["t0"]) * 1000,
        "jvm_boot_ms": (main_at - r["started"]) * 1000 if main_at is not None else None,
        "create_vm_ms": create_vm * 1000 if create_vm is not None else None,
        **{f"{p}_ms": line.get(f"{p}_ms") for p in PHASES},
        "main_to_listening_ms": line.get("startup_ms"),
        "first_request_ms": (r["first"] - listening_at) * 1000,
        "launch_ms": (r["first"] - r["t0"]) * 1000,
        "in_container_ms": (r["first"] - r["started"]) * 1000,
    }
    return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in out.items()}


def classes_run(podman: list[str], image: str, argv: list[str], es_url: str) -> dict:
    r = run_once(podman, image, images.with_jvm_options(argv, ["-Xlog:class+load=info:stdout:none"]), es_url)
    sources = [m[1] for x in r["lines"] if (m := CLASS_LOAD.match(x))]
    return {"classes": len(sources), "classes_from_cache": sum(s == "shared objects file" for s in sources)}


def measure(args: argparse.Namespace) -> dict:
    podman = args.podman.split()
    base = images.entrypoint(podman, args.image)
    no_aot = images.without_aot(base)
    if no_aot is None:
        raise SystemExit(f"{args.image}: no {images.AOT_CACHE_OPTION} in its entrypoint (not a JVM image with a cache)")
    argv = {"aot": base, "no-aot": no_aot}
    runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for _ in range(args.runs):  # the variants interleaved, so that a slow minute of the machine hits both
        for v in VARIANTS:
            runs[v].append(timing_run(podman, args.image, argv[v], args.es_url))
    result: dict = {"image": args.image, "limits": " ".join(images.LIMITS), "runs": runs, "median": {}, "range": {}}
    for v in VARIANTS:
        result["median"][v] = {}
        result["range"][v] = {}
        for key in runs[v][0]:
            values = [r[key] for r in runs[v] if r[key] is not None]
            result["median"][v][key] = statistics.median(values) if values else None
            result["range"][v][key] = [min(values), max(values)] if values else None
        result["median"][v].update(classes_run(podman, args.image, argv[v], args.es_url))
    return result


ROWS = [
    ("podman's setup (`podman run` → container start)", "podman_ms"),
    ("JVM boot (container start → `main()`)", "jvm_boot_ms"),
    ("… of which the JVM's own init (`Create VM`)", "create_vm_ms"),
    ("configuration and logging", "config_ms"),
    ("Elasticsearch client", "elasticsearch_client_ms"),
    ("startup health check (`GET /_cluster/health`)", "health_check_ms"),
    ("server: framework init and listen", "server_ms"),
    ("`main()` → listening", "main_to_listening_ms"),
    ("first request (listening → first 200 at the client)", "first_request_ms"),
    ("**launch → first 200**", "launch_ms"),
    ("container start → first 200", "in_container_ms"),
]


def table(files: list[str]) -> None:
    for f in files:
        r = json.loads(Path(f).read_text())
        med, rng = r["median"], r["range"]
        runs = len(r["runs"]["aot"])
        print(f"\n{r['image']} ({r['limits']}; median of {runs} runs, min–max)\n")
        print("| phase | with AOT cache | without AOT cache |")
        print("|---|---|---|")
        for label, key in ROWS:
            cells = []
            for v in VARIANTS:
                m, span = med[v].get(key), rng[v].get(key)
                cells.append("–" if m is None else f"{m:.0f} ms ({span[0]:.0f}–{span[1]:.0f})")
            print(f"| {label} | {cells[0]} | {cells[1]} |")
        cls = [f"{med[v]['classes']} ({med[v]['classes_from_cache']} from the cache)" for v in VARIANTS]
        print(f"| classes loaded by the first 200 | {cls[0]} | {cls[1]} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--podman", default="podman")
    p.add_argument("--image")
    p.add_argument("--es-url")
    p.add_argument("--json")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--table", nargs="+")
    args = p.parse_args()
    if args.table:
        table(args.table)
        return 0
    if not (args.image and args.es_url and args.json):
        p.error("--image, --es-url and --json are needed to measure")
    result = measure(args)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    table([args.json])
    return 0


if __name__ == "__main__":
    sys.exit(main())
