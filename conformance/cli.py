"""The runner: ``python -m conformance (--base-url URL | --service NAME | --command "ARGV...") [options]``,
installed as ``cityref-conformance``; ``console`` also dispatches the subcommands (differential,
load-fixture, elasticsearch)."""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from cityref_tools import descriptors, prerequisites, resources
from conformance import __version__, observe, prog, runtime
from conformance.cases import load_cases
from conformance.elastic import elasticsearch_missing
from conformance.known import KnownFailuresError, load_known
from conformance.plugin import OUTCOMES, RunnerPlugin
from conformance.runtime import GROUPS, ROOT, Config, Tracing

HERE = pathlib.Path(__file__).resolve().parent
BUILD_TIMEOUT = 1800
HTTP_ONLY = ("golden", "spec", "api-docs", "metrics", "schemathesis")
SUBCOMMANDS = {
    "differential": "the same generated hostile requests to several implementations, answers compared",
    "load-fixture": "create the indices and load the bundled fixture into an Elasticsearch (--es-url URL)",
    "elasticsearch": "start a single-node Elasticsearch container with the fixture and print its URL",
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog(),
        description="Black-box conformance suite for cityref services (spec/openapi.yaml).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Check groups, in run order: " + ", ".join(GROUPS) + ".\n"
        "--base-url runs the HTTP groups only (" + ", ".join(HTTP_ONLY) + ").\n\n"
        "Subcommands (each with --help):\n"
        + "".join(f"  {prog(name)}  {what}\n" for name, what in SUBCOMMANDS.items()),
    )
    p.add_argument("--version", action="version", version=f"cityref-conformance {__version__}")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--base-url", metavar="URL", help="a running service, e.g. http://127.0.0.1:8080")
    target.add_argument(
        "--service", metavar="NAME", help="a service of this repo: services/NAME/cityref.yaml (needs a checkout)"
    )
    target.add_argument("--command", metavar="ARGV", help="start this command (shell-quoted argv) as the service")
    p.add_argument(
        "--name", help="implementation name: its descriptor's known_failures apply (default: the service name)"
    )
    p.add_argument(
        "--known-failures",
        "--known",
        dest="known_failures",
        metavar="PATH",
        help="a YAML file whose `known_failures` list applies instead of the descriptor's (an implementation "
        "outside this repository): each entry is a strict xfail; its `logs` and `metrics` name the keys of its log "
        "lines and its histogram, as a descriptor's do (conformance/observe.py); --known is an alias",
    )
    p.add_argument("--cwd", help="working directory for --command (default: the current one)")
    p.add_argument(
        "--es-url",
        default=os.environ.get("CITYREF_ES_URL", "http://127.0.0.1:9250"),
        help="Elasticsearch with the fixture loaded (default: $CITYREF_ES_URL or %(default)s)",
    )
    p.add_argument("--no-build", action="store_true", help="--service: do not run the build command")
    p.add_argument("--junit", metavar="PATH", help="write JUnit XML here (default: junit.xml in the --out directory)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="logs and reports (default: out/conformance of the checkout, or of the current directory "
        "when the suite is installed)",
    )
    p.add_argument(
        "--only",
        metavar="GROUP",
        action="append",
        default=[],
        help="run only these groups (repeat or comma-separate): " + ", ".join(GROUPS),
    )
    p.add_argument("--max-examples", type=int, default=50, help="schemathesis examples per operation (%(default)s)")
    p.add_argument("--seed", type=int, default=20240601, help="schemathesis seed (%(default)s)")
    p.add_argument(
        "--backend-timeout-ms",
        type=int,
        default=1000,
        help="ELASTICSEARCH_TIMEOUT_MS of the backend-check instance (%(default)s)",
    )
    p.add_argument(
        "--traces",
        metavar="URL",
        help="run with tracing on: every instance exports its spans (OTEL_* variables) to this trace backend, "
        "whose Jaeger query API is at URL (e.g. http://127.0.0.1:16686, `make traces`), and the tracing group "
        "reads them back; without it the group checks that tracing is off by default",
    )
    p.add_argument(
        "--otlp-url",
        default="http://127.0.0.1:4318",
        metavar="URL",
        help="with --traces: the backend's OTLP/HTTP endpoint, the instances' OTEL_EXPORTER_OTLP_ENDPOINT "
        "(%(default)s)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="pytest verbose output (one line per check)")
    p.add_argument("--pytest-arg", action="append", default=[], help="extra pytest argument (repeatable)")
    return p.parse_args(argv)


def build(service_dir: pathlib.Path, command: str, log: pathlib.Path) -> bool:
    print(f"build: ({service_dir.relative_to(ROOT)}) {command}", flush=True)
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        try:
            rc = subprocess.call(
                ["bash", "-c", command], cwd=service_dir, stdout=f, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT
            )
        except subprocess.TimeoutExpired:
            f.write(f"\n# build timed out after {BUILD_TIMEOUT}s\n")
            rc = -1
    print(f"build: exit {rc} in {time.monotonic() - t0:.1f}s (log: {log})", flush=True)
    if rc != 0:
        print(log.read_text(encoding="utf-8", errors="replace")[-4000:], file=sys.stderr)
    return rc == 0


def missing(args: argparse.Namespace, desc: dict | None) -> Iterator[str | None]:
    """What the run needs before it starts (for prerequisites.check): a JDK 25+ for a JVM service (a
    runtime with --no-build), Elasticsearch with the fixture when the suite starts the service."""
    if desc is not None and descriptors.runs_on_jvm(desc):
        yield prerequisites.jdk(ROOT / "scripts" / "java-home.sh", jre=args.no_build)
    if not args.base_url:
        yield elasticsearch_missing(args.es_url)


def print_summary(plugin: RunnerPlugin, groups: list[str], n_cases: int, elapsed: float, junit: pathlib.Path):
    tally = plugin.tally()
    print()
    print(f"{'check group':<14}" + "".join(f"{o:>9}" for o in OUTCOMES))
    totals = dict.fromkeys(OUTCOMES, 0)
    for g in groups:
        c = tally.get(g, {})
        print(f"{g:<14}" + "".join(f"{c.get(o, 0):>9}" for o in OUTCOMES))
        for o in OUTCOMES:
            totals[o] += c.get(o, 0)
    print(f"{'total':<14}" + "".join(f"{totals[o]:>9}" for o in OUTCOMES))
    print()
    print(f"golden cases: {n_cases}")
    for k, v in runtime.REPORT.items():
        print(f"{k}: {v}")
    failed = [r for r in plugin.results.values() if r.outcome == "failed"]
    if failed:
        print(f"\nfailed checks ({len(failed)}):")
        shown: dict[str, int] = {}
        for r in sorted(failed, key=lambda r: r.check):
            group = r.check.split("/", 1)[0]
            shown[group] = shown.get(group, 0) + 1
            if shown[group] <= 40:
                print(f"  {r.check}: {r.message}")
        for group, n in shown.items():
            if n > 40:
                print(f"  ... and {n - 40} more in {group} (see the JUnit XML)")
    xfailed = [r for r in plugin.results.values() if r.outcome == "xfailed"]
    if xfailed:
        print(f"\nknown failures ({len(xfailed)}):")
        for r in sorted(xfailed, key=lambda r: r.check):
            print(f"  {r.check}: {r.message}")
    print(f"\nJUnit XML: {junit}   run time: {elapsed:.1f}s")


def default_signals() -> None:
    """Let the services the suite starts see SIGINT and SIGTERM with their default disposition.

    A signal ignored by a parent stays ignored across exec: a background job of a non-interactive
    shell (`cmd &` in a script, a CI runner) starts with SIGINT ignored, and a JVM then keeps it
    ignored, so the lifecycle check "SIGINT -> exit 0" would test the caller's shell instead of
    the service. A handled signal is reset to the default on exec, so handling it here suffices.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def tracing(args: argparse.Namespace, name: str | None) -> Tracing | None:
    """--traces: the instances' tracing settings, with a service name of their own for this run (the
    backend keeps earlier runs' traces)."""
    if not args.traces:
        return None
    run = f"{int(time.time())}-{os.getpid()}"
    return Tracing(args.traces.rstrip("/"), args.otlp_url.rstrip("/"), f"cityref-{name or 'service'}-{run}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    default_signals()
    t0 = time.monotonic()
    out = pathlib.Path(args.out or resources.default_out("conformance")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "logs", ignore_errors=True)
    junit = pathlib.Path(args.junit or out / "junit.xml").resolve()
    junit.parent.mkdir(parents=True, exist_ok=True)

    groups = [g.strip() for arg in args.only for g in arg.split(",") if g.strip()] or list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"unknown group(s) {unknown}; groups: {', '.join(GROUPS)}", file=sys.stderr)
        return 2
    groups = [g for g in GROUPS if g in groups]

    name = args.name
    cfg_kwargs = {}
    desc = None
    if args.base_url:
        mode = "base-url"
        cfg_kwargs["base_url"] = args.base_url.rstrip("/")
    elif args.service:
        mode = "service"
        try:
            resources.require_checkout("--service")
        except resources.ResourceError as e:
            print(e, file=sys.stderr)
            return 2
        desc_path = descriptors.path_of(args.service)
        if not desc_path.exists():
            print(f"no {desc_path.relative_to(ROOT)}", file=sys.stderr)
            return 2
        try:
            desc = descriptors.load(desc_path)
        except descriptors.DescriptorError as e:
            print(e, file=sys.stderr)
            return 2
        name = name or desc["name"]
        cfg_kwargs.update(argv=[str(a) for a in desc["command"]], cwd=desc_path.parent)
    else:
        mode = "command"
        cfg_kwargs.update(
            argv=shlex.split(args.command), cwd=pathlib.Path(args.cwd).resolve() if args.cwd else pathlib.Path.cwd()
        )
    rc = prerequisites.check(missing(args, desc))
    if rc:
        return rc
    if desc is not None:
        print(f"service: {desc['name']} ({desc['language']}, {desc['framework']})", flush=True)
        if not args.no_build and not build(cfg_kwargs["cwd"], str(desc["build"]), out / f"build-{desc['name']}.log"):
            print("build failed", file=sys.stderr)
            return 1

    try:
        own = pathlib.Path(args.known_failures) if args.known_failures else None
        known = load_known(name, own)
        logs, metric_names = observe.load(name, own)
        n_cases = len(load_cases())
    except (KnownFailuresError, ValueError) as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2

    cfg = Config(
        mode=mode,
        es_url=args.es_url.rstrip("/"),
        out_dir=out,
        groups=groups,
        name=name,
        known=known,
        seed=args.seed,
        max_examples=args.max_examples,
        backend_timeout_ms=args.backend_timeout_ms,
        tracing=tracing(args, name),
        logs=logs,
        metrics=metric_names,
        **cfg_kwargs,
    )
    runtime.CONFIG = cfg
    runtime.REPORT.clear()
    runtime.REPORT["target"] = (
        f"{mode} {cfg.base_url}" if mode == "base-url" else f"{mode} {shlex.join(cfg.argv)} (in {cfg.cwd})"
    )
    if name:
        runtime.REPORT["implementation"] = name
    if cfg.tracing:
        t = cfg.tracing
        runtime.REPORT["tracing"] = f"on: {t.service_name} -> {t.otlp_url}, read back from {t.query_url}"

    plugin = RunnerPlugin(known, groups)
    files = [str(HERE / "checks" / GROUPS[g]) for g in groups]
    pytest_args = [
        "-c",
        str(HERE / "pytest.ini"),
        "--rootdir",
        str(HERE),
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        "--junitxml",
        str(junit),
        "-o",
        "junit_family=xunit1",
        "-o",
        "junit_suite_name=cityref-conformance",
        "--tb=short",
        "-rfE",
        "-v" if args.verbose else "-q",
        *args.pytest_arg,
        *files,
    ]
    rc = pytest.main(pytest_args, plugins=[plugin])
    print_summary(plugin, groups, n_cases, time.monotonic() - t0, junit)
    if rc == 0 and any(r.outcome == "failed" for r in plugin.results.values()):
        rc = 1
    return int(rc)


def console(argv: list[str] | None = None) -> int:
    """``cityref-conformance`` / ``python -m conformance``: the runner, or a subcommand."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["differential"]:
        from conformance.differential import main as differential

        return differential(argv[1:])
    if argv[:1] == ["load-fixture"]:
        from conformance.elastic import load_fixture_main

        return load_fixture_main(argv[1:])
    if argv[:1] == ["elasticsearch"]:
        from conformance.elastic import container_main

        return container_main(argv[1:])
    return main(argv)
