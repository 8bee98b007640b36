"""Elasticsearch for the suite: ``cityref-conformance load-fixture`` and ``cityref-conformance elasticsearch``.

load-fixture   creates the cityref indices (spec/elasticsearch/) in any Elasticsearch 8 and loads the
               fixture (data/fixture/), both bundled with the suite; idempotent.
elasticsearch  starts a single-node Elasticsearch container (podman or docker, host network, security
               off, 512 MB heap), waits for green, loads the fixture and prints its URL on stdout;
               --stop removes the container again.

``elasticsearch_missing`` is the check, before a run starts a service, that an Elasticsearch with the
fixture answers (the runner's and the differential group's; its fix names the two subcommands).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys

from cityref_tools import elasticsearch, esdata, prerequisites
from conformance import prog

DEFAULT_ES_URL = "http://127.0.0.1:9250"
DEFAULT_IMAGE = "localhost/cityref/elasticsearch:8.19.21"  # built by this repository
OFFICIAL_IMAGE = "docker.elastic.co/elasticsearch/elasticsearch:8.19.21"  # takes the same settings
DEFAULT_NAME = "cityref-elasticsearch"
DEFAULT_PORT = 9200
RUNTIMES = ("podman", "docker")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def default_es_url() -> str:
    return os.environ.get("CITYREF_ES_URL", DEFAULT_ES_URL)


def elasticsearch_missing(url: str) -> str | None:
    """Elasticsearch with the fixture answers at url, for a service the suite starts (prerequisites.check)."""
    return prerequisites.elasticsearch(
        url.rstrip("/"),
        f"start it with `make es` in a checkout, or `{prog('elasticsearch')}`, or load the fixture into yours "
        f"with `{prog('load-fixture')} --es-url URL`",
        city_id=1,
    )


# ---------------------------------------------------------------- load-fixture


def load(es: str) -> int:
    """Loads the fixture into ``es`` and checks it is there: 0, or 1 with the reason printed."""
    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress to stderr: stdout is for results
            n = esdata.load_fixture(es)
    except (esdata.LoadError, OSError) as e:
        say(f"loading the fixture into {es} failed: {e}")
        return 1
    problem = elasticsearch.problem(es, city_id=1)
    if problem:
        say(f"the fixture is not readable from {es} after loading: {problem}")
        return 1
    say(f"fixture loaded into {es}: {n} documents (indices {', '.join(esdata.INDICES.values())})")
    return 0


def parse_load_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog("load-fixture"),
        description="Create the cityref indices in an Elasticsearch 8 and load the suite's fixture (bundled "
        "with it): 21 cities and 13 regions, indexed by id, so running it again changes nothing.",
    )
    p.add_argument(
        "--es-url",
        default=default_es_url(),
        help="Elasticsearch, security off (default: $CITYREF_ES_URL or %(default)s)",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=60,
        metavar="SECONDS",
        help="wait this long for Elasticsearch to answer first, e.g. a CI service container (%(default)s)",
    )
    return p.parse_args(argv)


def load_fixture_main(argv: list[str] | None = None) -> int:
    args = parse_load_args(argv)
    es = args.es_url.rstrip("/")
    problem = elasticsearch.wait_for_status(es, args.wait, ("yellow", "green"))
    if problem:
        say(f"Elasticsearch at {es} is not usable: {problem}")
        return 2
    return load(es)


# ---------------------------------------------------------------- elasticsearch (a container)


def es_settings(port: int) -> list[tuple[str, str]]:
    """The container's environment: the official image turns `a.b=c` variables into settings."""
    return [
        ("discovery.type", "single-node"),
        ("xpack.security.enabled", "false"),
        ("http.port", str(port)),
        ("network.host", "127.0.0.1"),
        ("ES_JAVA_OPTS", "-Xms512m -Xmx512m"),
    ]


def run_argv(runtime: str, image: str, port: int, name: str) -> list[str]:
    """The `run` command line: detached, host network, the settings as environment variables."""
    argv = [runtime, "run", "--detach", "--name", name, "--network", "host"]
    for key, value in es_settings(port):
        argv += ["--env", f"{key}={value}"]
    return [*argv, image]


def stop_argv(runtime: str, name: str) -> list[str]:
    return [runtime, "rm", "--force", name]


def state_argv(runtime: str, name: str) -> list[str]:
    return [runtime, "container", "inspect", "--format", "{{.State.Running}}", name]


def logs_argv(runtime: str, name: str) -> list[str]:
    return [runtime, "logs", "--tail", "40", name]


def runtime_arg(value: str) -> str:
    """--runtime: podman, docker, or an executable file taking their arguments."""
    if value in RUNTIMES or ("/" in value and os.access(value, os.X_OK) and os.path.isfile(value)):
        return value
    raise argparse.ArgumentTypeError(f"{value!r}: podman, docker or the path of an executable wrapper")


def find_runtime(which=shutil.which) -> str | None:
    """podman if installed, else docker."""
    return next((r for r in RUNTIMES if which(r)), None)


def container_state(runtime: str, name: str) -> str:
    """running | stopped | absent"""
    proc = subprocess.run(state_argv(runtime, name), capture_output=True, text=True)
    if proc.returncode != 0:
        return "absent"
    return "running" if proc.stdout.strip() == "true" else "stopped"


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def parse_container_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog("elasticsearch"),
        description="Start a single-node Elasticsearch 8 container for the suite (host network, security off, "
        "512 MB heap, listening on 127.0.0.1:PORT), wait for green, load the fixture, print the URL. "
        f"The official image {OFFICIAL_IMAGE} works too.",
    )
    p.add_argument(
        "--runtime",
        type=runtime_arg,
        help="podman or docker (default: podman if installed, else docker), or the path of a wrapper that takes "
        "their arguments (e.g. a checkout's scripts/podman.sh, which uses the repository's image storage)",
    )
    p.add_argument("--image", default=DEFAULT_IMAGE, help="image (default: %(default)s)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port on 127.0.0.1 (default: %(default)s)")
    p.add_argument("--name", default=DEFAULT_NAME, help="container name (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=180, help="seconds to wait for green (default: %(default)s)")
    p.add_argument("--stop", action="store_true", help="stop and remove the container instead")
    return p.parse_args(argv)


def container_main(argv: list[str] | None = None) -> int:
    args = parse_container_args(argv)
    runtime = args.runtime or find_runtime()
    if runtime is None:
        say("neither podman nor docker is installed (or give --runtime)")
        return 2
    if args.stop:
        proc = subprocess.run(stop_argv(runtime, args.name), capture_output=True, text=True)
        if proc.returncode != 0 and container_state(runtime, args.name) != "absent":
            say(f"{runtime} could not remove {args.name}: {proc.stderr.strip()}")
            return 1
        say(f"{args.name}: removed")
        return 0
    es = f"http://127.0.0.1:{args.port}"
    state = container_state(runtime, args.name)
    if state == "running":
        say(f"{args.name}: already running, reusing it")
    else:
        if state == "stopped":
            subprocess.run(stop_argv(runtime, args.name), capture_output=True)
        if port_in_use(args.port):
            say(f"port {args.port} is in use on 127.0.0.1 (another Elasticsearch?): choose one with --port")
            return 2
        argv = run_argv(runtime, args.image, args.port, args.name)
        say("starting: " + shlex.join(argv))
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            say(f"{runtime} run failed ({proc.returncode}): {proc.stderr.strip()}")
            return 1

    def stopped() -> str | None:
        return None if container_state(runtime, args.name) == "running" else "the container stopped"

    problem = elasticsearch.wait_for_status(es, args.timeout, ("green",), stop=stopped)
    if problem:
        logs = subprocess.run(logs_argv(runtime, args.name), capture_output=True, text=True)
        say(f"{args.name}: {problem}; its last log lines:\n{logs.stdout}{logs.stderr}")
        return 1
    rc = load(es)
    if rc == 0:
        say(
            f"Elasticsearch is up with the fixture; stop it with: "
            f"{prog('elasticsearch')} --stop --runtime {runtime} --name {args.name}"
        )
        print(es, flush=True)
    return rc
