"""Command line of the benchmark harness.

python -m bench [options]                  run a benchmark (options below)
python -m bench report RUN.json...         redraw a run's report.html
python -m bench check RUN.json             exit 1 if a run file is unusable (failed targets, missing figures)
python -m bench resilience [options]       outage, slow upstream, slow and hostile clients, soak, per target
                                           (python -m bench resilience --help)
python -m bench resilience-table RUN.json  the resilience run's tables in Markdown (also in a published results.md)
python -m bench compare RUN_A RUN_B [--html PATH]
                                           per target, how CPU per request, requests/s, memory and startup
                                           moved from A to B; changes within the runs' own spread are noise
python -m bench publish RUN_DIR [--dest D] a finished run into docs/results/<date>-<commit>/ (run.json, report,
                                           charts, results.md) and docs/results/latest (make bench-publish)
python -m bench before-after RUN.json      a --before-tag run's tables, each service's image before and after
                                           (--publish DIR: the run file readme_table.py reads)
python -m bench observability RUN.json     a run's "What observability costs" tables in Markdown (--variants;
                                           make bench-observability publishes them in docs/results/observability.md)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from cityref_tools import descriptors, prerequisites

from . import beforeafter, compare, observability, publish, ranking, report, resilience, runner, targets
from .resilience import report as resilience_report
from .targets import Limits

ROOT = Path(__file__).resolve().parent.parent


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown, and the description's command list kept as written."""


def services() -> list[dict]:
    return descriptors.all_services()


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--profile", choices=sorted(runner.PROFILES), default="quick")
    g = p.add_argument_group("targets")
    g.add_argument("--services", help="comma-separated services (default: every services/*/cityref.yaml)")
    g.add_argument("--no-bare", action="store_true", help="skip the services run bare")
    g.add_argument("--no-images", action="store_true", help="skip the services' images")
    g.add_argument("--image-tag", default="latest", help="tag of localhost/cityref/<service> images")
    g.add_argument(
        "--no-aot-variants",
        action="store_true",
        help="skip the JVM images run without their AOT cache (the '(image, no AOT)' targets)",
    )
    g.add_argument(
        "--aa",
        metavar="SERVICE",
        help="the A/A control: this service's image (its bare process with --no-images) runs as two identical "
        "targets (default: the profile's, publish java-helidon; 'none' for no pair)",
    )
    g.add_argument(
        "--variants",
        metavar="LIST",
        help="observability variants of every service, each a target beside its bare baseline: "
        + ", ".join(observability.VARIANTS)
        + " or all (bench/observability.py; tracing needs `make traces`)",
    )
    g.add_argument("--no-floor", action="store_true", help="skip the nginx proxy floor")
    g.add_argument("--no-ceiling", action="store_true", help="skip load straight at the upstream")
    g.add_argument(
        "--before-tag",
        metavar="TAG",
        help="also each service's image tagged TAG (localhost/cityref/<service>:TAG, e.g. built at an earlier commit), "
        "paired with its current image for `python -m bench before-after` (bench/beforeafter.py)",
    )
    g.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="IMAGE",
        help="also benchmark this image (started like the services' images)",
    )
    g.add_argument(
        "--url",
        action="append",
        default=[],
        metavar="URL",
        help="also benchmark an already running service at this base URL (no CPU/memory figures)",
    )
    g = p.add_argument_group("upstream and requests")
    g.add_argument("--upstream", choices=["elasticsearch", "static"], default="elasticsearch")
    g.add_argument("--es-url", default="http://127.0.0.1:9250")
    g.add_argument(
        "--mode",
        choices=["fixed", "random"],
        default="fixed",
        help="one fixed city (the original) or random ids of the bench dataset",
    )
    g.add_argument("--city-id", type=int, default=1_000_000, help="the fixed city")
    g.add_argument("--random-ids", type=int, default=10_000, help="how many distinct ids random mode draws")
    g.add_argument("--dataset-cities", type=int, default=100_000, help="cities in the loaded bench dataset")
    g = p.add_argument_group("method (profile overrides)")
    g.add_argument("--repeats", type=int, help="the classic method: whole runs per target, interleaved")
    g.add_argument("--blocks", type=int, help="the block method: starts of every target (publish 3; 0: classic)")
    g.add_argument("--rounds", type=int, help="interleaved rounds per block at the ranking steps (publish 6)")
    g.add_argument("--round-seconds", type=float, help="seconds of each ranking step in a round")
    g.add_argument("--rate", type=int, help="the fixed-rate step's offered req/s (0: none)")
    g.add_argument("--rate-connections", type=int, help="connections of the fixed-rate step (publish 1024)")
    g.add_argument(
        "--warmup",
        type=str,
        help="connections of the fixed warm-up steps (targets without CPU "
        "figures, or --stable-connections 0), e.g. 1,1,1,1,1",
    )
    g.add_argument("--warmup-seconds", type=float, help="seconds of each fixed warm-up step")
    g.add_argument(
        "--stable-connections",
        type=int,
        help="warm up in windows at this many connections until the CPU per request is stable "
        "(0: the fixed warm-up for every target)",
    )
    g.add_argument("--stable-window", type=float, help="seconds of each warm-up window")
    g.add_argument("--stable-cap", type=float, help="at most this many seconds of warm-up windows")
    g.add_argument(
        "--stable-tolerance",
        type=float,
        help="stable when the median CPU per request of the last windows lies within this of the median of "
        "the windows before them (0.05 = 5 %%)",
    )
    g.add_argument(
        "--stable-windows", type=int, help="windows per group the stability rule compares (default 3; smoke 2)"
    )
    g.add_argument(
        "--fixed-connections",
        type=int,
        help="the connection count every target is also compared at (one of the measured steps)",
    )
    g.add_argument("--connections", type=str, help="measured steps, e.g. 2,4,8,16")
    g.add_argument("--step-seconds", type=float)
    g.add_argument("--rates", type=str, help="open-loop rates (req/s), e.g. 500,2000")
    g.add_argument("--open-seconds", type=float)
    g.add_argument("--pause-seconds", type=float, help="idle time between steps")
    g.add_argument("--no-open-loop", action="store_true")
    g.add_argument("--no-verify", action="store_true", help="skip the conformance golden gate")
    g.add_argument("--no-pin", action="store_true", help="no taskset / cpuset placement")
    g.add_argument("--cpus", type=float, default=1.5, help="CPU quota of each target")
    g.add_argument("--memory-mib", type=int, default=512, help="memory limit of each target (swap off)")
    g.add_argument("--log-level", default="warn", help="LOG_LEVEL of the services (info logs every request)")
    g.add_argument("--price", type=float, default=0.0275, help="USD per vCPU-hour for the cost figure")
    g.add_argument("--timeout", type=int, default=15, help="request timeout of the load generators, seconds")
    p.add_argument("--vegeta", default=str(ROOT / ".cache" / "bin" / "vegeta"))
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench")
    return p


def build_targets(
    a: argparse.Namespace, upstream_label: str, prof: runner.Profile | None = None
) -> list[targets.Target]:
    """The targets the options select; `prof`: the main run's profile (its bare / AOT-variant / A/A
    choices), None for the resilience run, which has none of them."""
    all_services = services()
    wanted = a.services.split(",") if a.services else [s["name"] for s in all_services]
    unknown = set(wanted) - {s["name"] for s in all_services}
    if unknown:
        raise SystemExit(f"unknown services: {', '.join(sorted(unknown))}")
    chosen = [s for s in all_services if s["name"] in wanted]
    out: list[targets.Target] = []
    variants = observability.parse(a.variants) if getattr(a, "variants", None) else []
    if variants and a.no_bare:
        raise SystemExit("--variants runs the services bare: drop --no-bare")
    if not a.no_bare and (prof is None or prof.bare or variants):
        out += [targets.bare(s["name"], [str(x) for x in s["command"]]) for s in chosen]
    if variants:
        out += variant_targets(chosen, variants, out)
    if not a.no_images:
        out += [
            targets.image(f"{s['name']} (image)", f"localhost/cityref/{s['name']}:{a.image_tag}", s["name"])
            for s in chosen
        ]
        if not a.no_aot_variants and (prof is None or prof.aot_variants):
            out += [
                targets.image(
                    f"{s['name']} (image, no AOT)", f"localhost/cityref/{s['name']}:{a.image_tag}", s["name"], aot=False
                )
                for s in chosen
                if descriptors.runs_on_jvm(s)
            ]
    if getattr(a, "before_tag", None):
        if a.no_images:
            raise SystemExit("--before-tag pairs each service's images: drop --no-images")
        out += [beforeafter.target(s["name"], a.before_tag) for s in chosen]
    twin = aa_twin(a, chosen, prof) if prof else None
    if twin:
        out.insert(next(i for i, t in enumerate(out) if t.name == twin.meta["aa_of"]) + 1, twin)
    out += [targets.image(ref, ref) for ref in a.image]
    out += [targets.external(u) for u in a.url]
    if not a.no_floor:
        out.append(targets.floor(upstream_label))
    if not a.no_ceiling:
        from .upstream import es_meter

        out.append(targets.ceiling(upstream_label, a.es_url, es_meter()))
    return out


def variant_targets(chosen: list[dict], variants: list[str], bare: list[targets.Target]) -> list[targets.Target]:
    """Each service's observability variants (bench/observability.py) as bare targets of their own, and the
    baselines marked; the trace backend must be up for the tracing ones, the agent is fetched for the JVM."""
    otlp = agent = None
    if any(observability.VARIANTS[v].traces for v in variants):
        why = backend_missing()
        if why:
            raise SystemExit(why)
        otlp = traces_sh("otlp")
    if "agent" in variants and any(descriptors.runs_on_jvm(s) for s in chosen):
        agent = traces_sh("agent")
    out = []
    for s in chosen:
        jvm = descriptors.runs_on_jvm(s)
        base = next(t for t in bare if t.name == s["name"])
        base.meta.update(variant=observability.BASELINE, variant_of=s["name"], jvm=jvm)
        for v in variants:
            if observability.VARIANTS[v].jvm_only and not jvm:
                continue
            t = targets.bare(
                s["name"],
                [str(x) for x in s["command"]],
                label=observability.label(s["name"], v),
                extra_env=observability.environment(v, s["name"], otlp, agent),
            )
            t.meta.update(variant=v, variant_of=s["name"], jvm=jvm)
            out.append(t)
    return out


def traces_sh(command: str) -> str:
    """scripts/traces.sh COMMAND's one line of output (the OTLP URL, the agent's path, the pid)."""
    done = subprocess.run([str(ROOT / "scripts" / "traces.sh"), command], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"scripts/traces.sh {command} failed: {done.stderr.strip()[-400:]}")
    return done.stdout.strip()


def backend_missing() -> str | None:
    """Why the trace backend cannot take the variants' spans, or None (it answers its health check)."""
    done = subprocess.run([str(ROOT / "scripts" / "traces.sh"), "status"], capture_output=True, text=True)
    if done.returncode != 0:
        return "cityref: the trace backend is not running: make traces (the tracing variants export to it)"
    return None


def backend_meter(a: argparse.Namespace) -> targets.Meter | None:
    """The trace backend's CPU, sampled around every step of a run with tracing variants."""
    if not getattr(a, "variants", None):
        return None
    pid = subprocess.run([str(ROOT / "scripts" / "traces.sh"), "pid"], capture_output=True, text=True).stdout.strip()
    return targets.ProcMeter(lambda: [int(pid)] if pid.isdigit() else [])


def aa_twin(a: argparse.Namespace, chosen: list[dict], prof: runner.Profile) -> targets.Target | None:
    """The A/A control's second target: the same image (or bare command) under another name, marked
    `aa_of` the first. Its service's image if images run, else its bare process; None without a pair
    (the profile's pair only in a block-method run; --aa always)."""
    svc = a.aa if a.aa is not None else prof.aa_service
    if not svc or svc == "none" or (a.aa is None and not prof.blocks):
        return None
    desc = next((s for s in chosen if s["name"] == svc), None)
    if desc is None:
        if a.aa is None:  # the profile's choice, but that service is not in this run
            return None
        raise SystemExit(f"--aa {svc}: not one of the services of this run")
    if not a.no_images:
        twin = targets.image(f"{svc} (image, A/A twin)", f"localhost/cityref/{svc}:{a.image_tag}", svc)
        of = f"{svc} (image)"
    elif not a.no_bare and prof.bare:
        twin = targets.bare(svc, [str(x) for x in desc["command"]], label=f"{svc} (A/A twin)")
        of = svc
    else:
        raise SystemExit(f"--aa {svc}: neither its image nor its bare process is in this run")
    twin.meta["aa_of"] = of
    return twin


def config(a: argparse.Namespace) -> runner.Config:
    prof = runner.PROFILES[a.profile]
    overrides = {
        k: v
        for k, v in {
            "repeats": a.repeats,
            "warmup": ints(a.warmup) if a.warmup is not None else None,
            "warmup_s": a.warmup_seconds,
            "connections": ints(a.connections) if a.connections else None,
            "step_s": a.step_seconds,
            "open_rates": ints(a.rates) if a.rates is not None else None,
            "open_s": a.open_seconds,
            "pause_s": a.pause_seconds,
            "stable_connections": a.stable_connections,
            "stable_window_s": a.stable_window,
            "stable_cap_s": a.stable_cap,
            "stable_tolerance": a.stable_tolerance,
            "stable_agreeing": a.stable_windows,
            "fixed_connections": a.fixed_connections,
            "blocks": a.blocks,
            "rounds": a.rounds,
            "round_s": a.round_seconds,
            "rate": a.rate,
            "rate_connections": a.rate_connections,
        }.items()
        if v is not None
    }
    prof = replace(prof, **overrides)
    problem = profile_problem(prof)
    if problem:
        raise SystemExit(problem)
    label = "static upstream" if a.upstream == "static" else "Elasticsearch"
    return runner.Config(
        profile=prof,
        targets=build_targets(a, label, prof),
        upstream=a.upstream,
        es_url=a.es_url,
        mode=a.mode,
        city_id=a.city_id,
        random_ids=a.random_ids,
        dataset_cities=a.dataset_cities,
        limits=Limits(a.cpus, a.memory_mib * 2**20),
        pin=not a.no_pin,
        log_level=a.log_level,
        price_per_vcpu_hour=a.price,
        open_loop=not a.no_open_loop and bool(prof.open_rates),
        verify=not a.no_verify,
        vegeta=a.vegeta,
        out=a.out,
        timeout_s=a.timeout,
        backend_meter=backend_meter(a),
    )


def profile_problem(p: runner.Profile) -> str | None:
    """Why a (possibly overridden) profile cannot give the figures it promises, or None."""
    if not p.connections:
        return "no measured connection counts (--connections)"
    if p.fixed_connections not in p.connections:
        return (
            f"--fixed-connections {p.fixed_connections} is not one of the measured steps "
            f"{','.join(map(str, p.connections))}"
        )
    if p.blocks < 0 or p.blocks and p.rounds < 3:
        return "the block method needs --blocks ≥ 1 and --rounds ≥ 3 (the steady-state test keeps at least 3)"
    if p.stable_connections < 0:
        return "--stable-connections must be 0 (off) or more"
    if p.stable_connections:
        if p.stable_window_s <= 0 or p.stable_tolerance <= 0:
            return "--stable-window and --stable-tolerance must be positive"
        if p.stable_agreeing < 2:
            return "--stable-windows must be 2 or more"
        if p.stable_cap_s < 2 * p.stable_agreeing * p.stable_window_s:
            return (
                f"--stable-cap {p.stable_cap_s:g} s leaves no room for the two groups of {p.stable_agreeing} "
                f"windows of {p.stable_window_s:g} s the stability rule compares"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["resilience"]:
        return resilience_main(argv[1:])
    if argv[:1] == ["observability"]:  # a run's observability tables; --publish PATH: the generated page
        return observability.main(argv[1:])
    if argv[:1] == ["before-after"]:  # a --before-tag run's tables per service; --publish DIR: the run file
        return beforeafter.main(argv[1:])
    if argv[:1] == ["resilience-table"]:  # a resilience run's tables in Markdown
        print(resilience_report.markdown(json.loads(Path(argv[1]).read_text())), end="")
        return 0
    if argv[:1] == ["check"]:
        doc = json.loads(Path(argv[1]).read_text())
        problems = resilience.check(doc) if doc.get("schema") == resilience.SCHEMA else check(doc)
        print("\n".join(problems) or f"{argv[1]}: ok")
        return 1 if problems else 0
    if argv[:1] == ["compare"]:
        c = argparse.ArgumentParser(
            prog="python -m bench compare",
            description=compare.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        c.add_argument("run_a", help="the earlier run: its run.json or its directory")
        c.add_argument("run_b", help="the later run")
        c.add_argument(
            "--html",
            type=Path,
            default=ROOT / "out" / "bench" / "compare.html",
            help="where the rendered comparison goes (default: out/bench/compare.html)",
        )
        ca = c.parse_args(argv[1:])
        run_a, run_b = compare.load(ca.run_a), compare.load(ca.run_b)
        rows = compare.compare(run_a, run_b)
        print(compare.text(run_a, run_b, rows))
        ca.html.parent.mkdir(parents=True, exist_ok=True)
        ca.html.write_text(compare.html(run_a, run_b, rows))
        print(f"\nrendered: {ca.html}")
        return 0
    if argv[:1] == ["publish"]:  # a finished run into docs/results/<date>-<commit>/ (make bench-publish)
        c = argparse.ArgumentParser(prog="python -m bench publish", description=publish.__doc__)
        c.add_argument("run_dir", type=Path, help="the run's directory (its run.json and report.html)")
        c.add_argument("--dest", type=Path, default=ROOT / publish.PUBLISHED, help="default: docs/results")
        c.add_argument("--resilience", type=Path, metavar="RUN_DIR", help="a resilience run to publish beside it")
        ca = c.parse_args(argv[1:])
        print(publish.publish(ca.run_dir.resolve(), ca.dest, ca.resilience.resolve() if ca.resilience else None))
        return 0
    if argv[:1] == ["report"]:
        for f in argv[1:]:
            doc = json.loads(Path(f).read_text())
            render = resilience_report.html if doc.get("schema") == resilience.SCHEMA else report.html
            Path(f).with_name("report.html").write_text(render(doc))
            print(Path(f).with_name("report.html"))
        return 0
    a = parser().parse_args(argv)
    cfg = replace(config(a), command=" ".join(["python -m bench", *argv]))
    rc = prerequisites.check(
        missing(
            "python -m bench",
            "make bench",
            cfg.targets,
            a,
            vegeta=cfg.vegeta if cfg.open_loop or (cfg.profile.blocks and cfg.profile.rate) else None,
        )
    )
    if rc:
        return rc
    outdir = runner.run(cfg)
    doc = json.loads((outdir / "run.json").read_text())
    print(text_summary(doc))
    print(f"\nreport: {outdir / 'report.html'}\nrun file: {outdir / 'run.json'}")
    return 0 if all(r["status"] == "ok" for r in doc["results"]) else 1


def resilience_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench resilience", description=resilience.__doc__, formatter_class=HelpFormatter
    )
    p.add_argument("--profile", choices=sorted(resilience.PROFILES), default="quick")
    p.add_argument("--services", help="comma-separated services (default: every services/*/cityref.yaml)")
    p.add_argument("--no-bare", action="store_true", help="skip the services run bare")
    p.add_argument("--no-images", action="store_true", help="skip the services' images")
    p.add_argument("--image-tag", default="latest", help="tag of localhost/cityref/<service> images")
    p.add_argument("--es-url", default="http://127.0.0.1:9250")
    p.add_argument("--soak-minutes", type=int, help="soak slices (one minute each outside the smoke profile)")
    p.add_argument("--slow-clients", type=int, help="how many slow-header connections")
    p.add_argument("--no-pin", action="store_true", help="no taskset / cpuset placement")
    p.add_argument("--cpus", type=float, default=1.5, help="CPU quota of each target")
    p.add_argument("--memory-mib", type=int, default=512, help="memory limit of each target (swap off)")
    p.add_argument("--log-level", default="warn", help="LOG_LEVEL of the services")
    p.add_argument("--timeout", type=int, default=15, help="request timeout of the load generators, seconds")
    p.add_argument("--vegeta", default=str(ROOT / ".cache" / "bin" / "vegeta"))
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench")
    return p


APT_FIX = "apt-get install wrk nginx-light (as root; make bench does it)"


def missing(
    who: str, make: str, chosen: list[targets.Target], a: argparse.Namespace, vegeta: str | None
) -> Iterator[str | None]:
    """What a run of the chosen targets needs (for `prerequisites.check`), cheap checks first: root when
    something runs in a cgroup of the harness, wrk, nginx (the floor, the static upstream), vegeta
    (open loop), the images, Elasticsearch. The ports the run binds are picked free as it binds them."""
    static = a.upstream == "static"
    if static or any(t.kind in runner.MEASURED_KINDS for t in chosen):
        yield prerequisites.root_for_cgroups(who, a.cpus, a.memory_mib, f"run it as root, e.g. sudo {make}")
    yield prerequisites.tool("wrk", APT_FIX)
    if static or any(t.kind == "floor" for t in chosen):
        yield prerequisites.tool("nginx", APT_FIX if static else f"{APT_FIX}, or --no-floor")
    if vegeta and not Path(vegeta).exists():
        yield f"vegeta missing at {vegeta}: scripts/bench.sh setup builds it (or pass --vegeta PATH)"
    build = "make images" if a.image_tag == "latest" else f"IMAGE_TAG={a.image_tag} make images"
    for t in {t.meta["image"]: t for t in chosen if t.kind == "image"}.values():
        ref, service = t.meta["image"], t.meta["service"]
        fix = f"{build} (or --no-images)" if service else "scripts/podman.sh load -i ARCHIVE (or leave out --image)"
        if t.meta.get("before_of"):
            tag = ref.rsplit(":", 1)[1]
            fix = f"IMAGE_TAG={tag} make images in a checkout of the earlier commit (or leave out --before-tag)"
        yield prerequisites.image([targets.PODMAN], ref, fix)
    yield prerequisites.elasticsearch(a.es_url, "start it with `make es`, or pass --es-url")


def resilience_main(argv: list[str]) -> int:
    a = resilience_parser().parse_args(argv)
    a.no_aot_variants, a.image, a.url, a.no_floor, a.no_ceiling = True, [], [], True, True
    a.upstream = "elasticsearch"
    prof = resilience.PROFILES[a.profile]
    prof = replace(
        prof,
        **{k: v for k, v in {"soak_minutes": a.soak_minutes, "slow_clients": a.slow_clients}.items() if v is not None},
    )
    chosen = build_targets(a, "Elasticsearch")
    rc = prerequisites.check(missing("python -m bench resilience", "make bench-resilience", chosen, a, vegeta=a.vegeta))
    if rc:
        return rc
    cfg = resilience.Config(
        profile=prof,
        targets=chosen,
        es_url=a.es_url,
        limits=Limits(a.cpus, a.memory_mib * 2**20),
        pin=not a.no_pin,
        log_level=a.log_level,
        vegeta=a.vegeta,
        out=a.out,
        timeout_s=a.timeout,
    )
    outdir = resilience.run(cfg)
    doc = json.loads((outdir / "run.json").read_text())
    print(resilience_report.text(doc))
    print(f"\nreport: {outdir / 'report.html'}\nrun file: {outdir / 'run.json'}")
    return 0 if all(r["status"] == "ok" for r in doc["resilience"]) else 1


def check(doc: dict) -> list[str]:
    """What makes a run file unusable: failed targets, steps without successes or (where measured) CPU;
    for schema 2 also a missing warm-up record, fixed-count or overload figures."""
    problems = []
    schema = doc.get("schema")
    if schema not in runner.SCHEMAS:
        problems.append(f"schema {schema!r} is not one of {', '.join(runner.SCHEMAS)}")
    if not doc.get("results"):
        problems.append("no results")
    blocks = doc.get("profile", {}).get("blocks")
    for r in doc.get("results", []):
        name = f"{r['target']} ({'block' if blocks else 'repeat'} {r['repeat'] + 1})"
        if r["status"] == "died" and (r.get("death") or {}).get("log_tail") is not None:
            continue  # a death with its evidence is a finding, shown in the report and the results page
        if r["status"] != "ok":
            problems.append(f"{name}: {r['reason']}")
            continue
        measured = r["kind"] in runner.MEASURED_KINDS
        for s in r["steps"]:
            if s["successes"] <= 0:
                problems.append(f"{name}: a {s['kind']} step served nothing")
            if measured and not s["cpu_s"]:
                problems.append(f"{name}: a {s['kind']} step has no CPU figure")
        if measured and not (r.get("totals") or {}).get("requests_per_cpu_s"):
            problems.append(f"{name}: no requests per CPU-second")
        if schema == runner.SCHEMA:
            problems += [f"{name}: {p}" for p in _check_v2(doc, r, measured)]
    if blocks:
        problems += check_ranking(doc)
    return problems


def check_ranking(doc: dict) -> list[str]:
    """A block-method run: a ranking with rounds; every ranked target with a start per block; for the
    publish profile the A/A control within its limit (bench/ranking.py)."""
    rk = doc.get("ranking")
    if not rk or not rk.get("steps"):
        return ["no ranking (the block method's rounds are missing)"]
    problems = []
    p = doc["profile"]
    for r in doc["results"]:
        rounds = ranking.series(r, "round")
        if r["status"] == "ok" and len(rounds) != p["rounds"]:
            problems.append(f"{r['target']} (block {r['repeat'] + 1}): {len(rounds)} of {p['rounds']} rounds")
    if p["name"] != "publish":  # a tiny smoke run exercises the method; the publish run is held to it
        return problems
    for step, st in rk["steps"].items():
        for row in st["rows"]:
            if row["settled"] < min(p["blocks"], 3):
                problems.append(f"ranking ({step}): {row['target']} has {row['settled']} settled starts")
        for row in st["unranked"]:
            if row["kind"] in ("bare", "image") and not row["why"].startswith("A/A"):
                problems.append(f"ranking ({step}): {row['target']} is not ranked: {row['why']}")
    return problems + ranking.aa_problems(rk.get("aa"))


def _check_v2(doc: dict, r: dict, measured: bool) -> list[str]:
    """The figures schema 2 adds: warm-up record, figures at the fixed count, overload figures."""
    problems = []
    w = r.get("warmup")
    warm_steps = sum(1 for s in r["steps"] if s["kind"] == "warmup")
    if not w:
        problems.append("no warm-up record")
    elif w["windows"] != warm_steps or len(w["window_cpu_us_per_request"]) != warm_steps:
        problems.append(f"the warm-up record counts {w['windows']} windows, the steps {warm_steps}")
    elif w["mode"] == "stable" and w["converged"] == w["capped"]:
        problems.append("the warm-up is neither converged nor capped")
    totals = r.get("totals") or {}
    fixed = totals.get("at_fixed") or {}
    if fixed.get("connections") != doc["profile"].get("fixed_connections"):
        problems.append(f"no figures at {doc['profile'].get('fixed_connections')} connections")
    elif fixed.get("rps") is None or (measured and fixed.get("cpu_us_per_request") is None):
        problems.append(f"incomplete figures at {fixed['connections']} connections")
    if r["kind"] in runner.SERVICE_KINDS and "framework_only" in totals:  # run files since the framework step
        alone = totals["framework_only"] or {}
        if alone.get("rps") is None or (measured and alone.get("cpu_us_per_request") is None):
            problems.append("no framework-only (GET /health) figures")
    over = totals.get("overload") or {}
    top = max(doc["profile"]["connections"], default=None)
    if doc["profile"].get("blocks") and r["kind"] not in runner.SERVICE_KINDS:
        return problems  # the block method measures the baselines at the ranking steps only
    if over.get("connections") != top:
        problems.append(f"no overload figures at {top} connections")
    elif over.get("error_ratio") is None or (
        measured and (over.get("memory_peak_bytes") is None or over.get("oom_kills") is None)
    ):
        problems.append(f"incomplete overload figures at {top} connections")
    return problems


def text_summary(doc: dict) -> str:
    n = doc["profile"].get("fixed_connections", report.FIXED_CONNECTIONS)
    at = f"@{n}"
    lines = [
        f"{'target':34} {'µs/req' + at:>10} {'×floor' + at:>9} {'µs /health':>11} {'peak req/s':>10} {'req/CPU-s':>10} "
        f"{'× floor':>8} {'startup':>9} {'warm-up':>9} {'mem HWM':>10} {'errors':>8}  status"
    ]

    def med(b: dict | None) -> float | None:
        return b["median"] if b else None

    for r in doc["summary"]:
        fixed = r.get("at_fixed") or {}
        st, err, w = med(r["startup_s"]), med(r["error_ratio"]), r.get("warmup")
        warm = "–" if not w or med(w["seconds"]) is None else f"{med(w['seconds']):.0f} s"
        if w and w["capped"]:
            warm += "!"
        flag = " ⚠" if r.get("efficiency_spread_wide") else ""
        err_text = "–" if err is None else f"{err:.2%}"
        lines.append(
            f"{r['target'][:34]:34} {report.fmt_num(med(fixed.get('cpu_us_per_request')), 1) + flag:>10} "
            f"{report.fmt_num(med(fixed.get('ratio_to_floor')), 2):>9} "
            f"{report.fmt_num(med((r.get('framework_only') or {}).get('cpu_us_per_request')), 1):>11} "
            f"{report.fmt_num(med(r['peak_rps'])):>10} "
            f"{report.fmt_num(med(r['requests_per_cpu_s'])):>10} {report.fmt_num(r['ratio_to_floor'], 2):>8} "
            f"{'–' if st is None else f'{st * 1000:.0f} ms':>9} {warm:>9} "
            f"{report.fmt_bytes(med(r['memory_peak_bytes_last_step'])):>10} {err_text:>8}  "
            + ("ok" if r["ok"] == r["runs"] else "; ".join(r["failures"])[:120])
        )
    lines.append(
        f"µs/req{at}, ×floor{at}: CPU per request and requests per CPU-second relative to the floor at {n} "
        f"connections; µs /health: the framework alone, on a route without Elasticsearch; ⚠: repeats differ "
        f"by more than {report.SPREAD_LIMIT:.0%}; warm-up !: hit the cap"
    )
    return "\n".join(lines)
