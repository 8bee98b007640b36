"""What observability costs: each service run as variants beside its baseline, in the same block-method
run, and each variant's cost against the baseline with its interval.

Variants (`--variants`, `make bench-observability`), each a target of its own:

``baseline``   the service as the ranking runs it (tracing off, LOG_LEVEL=warn)
``trace-all``  the service's own OpenTelemetry integration, every request sampled (OTLP/HTTP to the trace
               backend of `make traces`)
``trace-10``   the same with ``parentbased_traceidratio`` at 0.1: a tenth of the requests sampled
``agent``      JVM services: the OpenTelemetry Java agent (zero-code; ``-javaagent`` through
               JAVA_TOOL_OPTIONS, configured by system properties), the service's own tracing off
``log-info``   LOG_LEVEL=info: one JSON line per request

All of them run bare (the same binary or jar as the image, under the same cgroup limits): the agent needs
the full JDK runtime (``java.instrument``), which the jlinked images leave out, and every variant of a
service runs the same way so that the deltas compare like with like.

The costs come from the ranking's own machinery (bench/ranking.py): per round of each block, the variant
over its baseline (both measured minutes apart under the same machine state), summarized as the median of
the blocks' medians with a hierarchical bootstrap interval. Pure functions over the run file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import ranking

BASELINE = "baseline"


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    jvm_only: bool = False
    traces: bool = False  # exports spans to the trace backend


VARIANTS = {
    v.name: v
    for v in (
        Variant("trace-all", "own OpenTelemetry integration, every request sampled", traces=True),
        Variant("trace-10", "own OpenTelemetry integration, 10 % of the requests sampled", traces=True),
        Variant("agent", "OpenTelemetry Java agent (zero-code), every request sampled", jvm_only=True, traces=True),
        Variant("log-info", "LOG_LEVEL=info: a JSON line per request"),
    )
}
AGENT_VERSION = "2.31.0"  # scripts/traces.sh agent fetches it


def parse(text: str) -> list[str]:
    """--variants: comma-separated names, or `all`."""
    names = list(VARIANTS) if text.strip() == "all" else [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(unknown)}; known: {', '.join(VARIANTS)} or all")
    return names


def label(service: str, variant: str) -> str:
    return service if variant == BASELINE else f"{service} [{variant}]"


def environment(variant: str, service: str, otlp_url: str | None, agent_jar: str | None) -> dict[str, str]:
    """The variables a variant adds to the service's environment (after PORT, ELASTICSEARCH_URL, LOG_LEVEL)."""
    name = f"cityref-{service}-{variant}"
    if variant == "log-info":
        return {"LOG_LEVEL": "info"}
    if variant in ("trace-all", "trace-10"):
        env = {
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_url or "",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": name,
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
        }
        if variant == "trace-10":
            env.update(OTEL_TRACES_SAMPLER="parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG="0.1")
        return env
    if variant == "agent":
        # system properties, not OTEL_* variables: the service's own tracing reads OTEL_TRACES_EXPORTER and
        # stays off, so the agent's spans are the only ones
        props = {
            "otel.traces.exporter": "otlp",
            "otel.metrics.exporter": "none",
            "otel.logs.exporter": "none",
            "otel.exporter.otlp.protocol": "http/protobuf",
            "otel.exporter.otlp.endpoint": otlp_url or "",
            "otel.service.name": name,
        }
        return {"JAVA_TOOL_OPTIONS": " ".join([f"-javaagent:{agent_jar}", *(f"-D{k}={v}" for k, v in props.items())])}
    raise ValueError(variant)


# ---------------------------------------------------------------- the costs, from the run file


def _series(rec: dict, kind: str, value) -> dict[int, float | None]:
    return {r: value(s) for r, s in ranking.series(rec, kind).items()}


def _p99(step: dict) -> float | None:
    return (step.get("latency_ms") or {}).get("p99")


def _working_set(step: dict) -> float | None:
    return step.get("memory_working_set_bytes")


def _backend_us(step: dict) -> float | None:
    ok = step.get("successes")
    cpu = step.get("backend_cpu_s")
    return cpu * 1e6 / ok if cpu is not None and ok else None


def _like(start: dict, rec: dict, kind: str, value) -> dict:
    """A copy of a start's CPU record (its rounds, steady state and kept rounds) with another figure's values:
    the steady-state test is the CPU's, so every figure of a start is read over the same rounds."""
    by_round = _series(rec, kind, value)
    return {**start, "values": [by_round.get(r) for r in start["rounds"]]}


def _ratio_of_startups(a: list[dict], b: list[dict]) -> dict | None:
    by_block = {r["repeat"]: r for r in b}
    groups = [
        [ra["startup_s"] / by_block[ra["repeat"]]["startup_s"]]
        for ra in a
        if ra.get("startup_s") and by_block.get(ra["repeat"], {}).get("startup_s")
    ]
    if not groups:
        return None
    # one start gives one ratio: no interval (a bootstrap of one value would print it as [x, x])
    ci = ranking.hierarchical_bootstrap(groups, seed=ranking.SEED) if len(groups) > 1 else None
    return {"median": ranking.median_of_medians(groups), "interval": list(ci) if ci else None, "blocks": len(groups)}


def _kept_median(starts: list[dict]) -> float | None:
    vals = [v for s in starts if s["settled"] for v in s["values"][s["kept_from"] :] if v is not None]
    return statistics.median(vals) if vals else None


def costs(doc: dict, steps: dict) -> dict | None:
    """Per service, per variant: the ratios to its baseline (CPU per request at the closed-loop and the
    fixed-rate step, p99 at the fixed rate, working set at the closed-loop step, startup) with their
    intervals, and the trace backend's CPU per request. `steps`: the ranking's steps (their start records).
    None for a run without variants."""
    metas = {t["name"]: t.get("meta") or {} for t in doc.get("targets", [])}
    variants = {n: m for n, m in metas.items() if m.get("variant") and m.get("variant") != BASELINE}
    if not variants:
        return None
    recs: dict[str, list[dict]] = {}
    for r in doc["results"]:
        recs.setdefault(r["target"], []).append(r)
    closed, rate = steps.get("closed", {}).get("starts", {}), steps.get("rate", {}).get("starts", {})
    by_block = {t: {r["repeat"]: r for r in rs} for t, rs in recs.items()}

    def like(starts: dict, target: str, kind: str, value) -> list[dict]:
        return [_like(s, by_block[target][s["block"]], kind, value) for s in starts.get(target, [])]

    rows: dict[str, dict] = {}
    for name, meta in variants.items():
        base = meta["variant_of"]
        service = meta.get("service", base)
        row = rows.setdefault(service, {"baseline": base, "variants": {}})
        cell = {
            "target": name,
            "cpu": ranking.paired_ratio(closed.get(name, []), closed.get(base, [])),
            "cpu_rate": ranking.paired_ratio(rate.get(name, []), rate.get(base, [])),
            "p99_rate": ranking.paired_ratio(like(rate, name, "rate", _p99), like(rate, base, "rate", _p99)),
            "working_set": ranking.paired_ratio(
                like(closed, name, "round", _working_set), like(closed, base, "round", _working_set)
            ),
            "startup": _ratio_of_startups(recs.get(name, []), recs.get(base, [])),
            "backend_cpu_us_per_request": _kept_median(like(closed, name, "round", _backend_us)),
        }
        row["variants"][meta["variant"]] = cell
    for service, row in rows.items():  # what does not apply, said as such
        jvm = any((metas.get(t) or {}).get("jvm") for t in metas if (metas.get(t) or {}).get("service") == service)
        for v in VARIANTS.values():
            if v.name not in row["variants"] and v.jvm_only and not jvm:
                row["variants"][v.name] = {"not_applicable": "no JVM: the Java agent does not apply"}
    prof = doc.get("profile", {})
    return {
        "variants": {v.name: v.what for v in VARIANTS.values()},
        "closed": f"{prof.get('fixed_connections', '?')} connections, closed loop",
        "rate": f"{prof.get('rate', '?')} req/s" if prof.get("rate") else "fixed rate",
        "services": rows,
    }


def apply(doc: dict) -> None:
    """After ranking.apply: the costs of the run's variants, `doc["ranking"]["observability"]`."""
    if doc.get("ranking") is not None:
        doc["ranking"]["observability"] = costs(doc, doc["ranking"]["steps"])


# ---------------------------------------------------------------- the table


def _delta(r: dict | None) -> str:
    if not r or r.get("median") is None:
        return "–"
    med = f"{(r['median'] - 1) * 100:+.0f} %"
    if not r.get("interval"):
        return med
    lo, hi = ((x - 1) * 100 for x in r["interval"])
    return f"{med} [{lo:+.0f}, {hi:+.0f}]"


FIGURES = (  # {closed} and {rate}: the run's ranking steps
    ("cpu", "CPU per request ({closed})"),
    ("cpu_rate", "CPU per request ({rate})"),
    ("p99_rate", "p99 latency ({rate})"),
    ("working_set", "working set under load ({closed})"),
    ("startup", "startup (launch → first answer)"),
)


def markdown(obs: dict | None) -> str:
    """One table per figure: a row per framework, a column per variant, each cell the variant's change against
    the baseline with its 95 % interval (the CPU table also has the trace backend's own CPU per request)."""
    if not obs:
        return "No observability variants in this run (`make bench-observability`).\n"
    # the variants the run measured for at least one service (`--variants` may name a few)
    names = [
        n
        for n in obs["variants"]
        if any(
            not (row["variants"].get(n) or {"not_applicable": 1}).get("not_applicable")
            for row in obs["services"].values()
        )
    ]
    out = ["Variants: " + "; ".join(f"`{n}`: {obs['variants'][n]}" for n in names) + ".", ""]
    for key, title in FIGURES:
        cols = [f"`{n}`" for n in names]
        if key == "cpu":
            traced = [n for n in ("trace-all", "agent") if n in names]
            cols += [f"trace backend CPU µs/request ({', '.join(f'`{n}`' for n in traced)})"] if traced else []
        title = title.format(closed=obs.get("closed", "closed loop"), rate=obs.get("rate", "fixed rate"))
        out += [f"**{title}**, change against the baseline [95 % interval]:", ""]
        out += ["| framework | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        for service, row in sorted(obs["services"].items()):
            cells = []
            for n in names:
                c = row["variants"].get(n)
                if c is None:
                    cells.append("not run")
                elif c.get("not_applicable"):
                    cells.append("n/a (no JVM)")
                else:
                    cells.append(_delta(c.get(key)))
            if key == "cpu" and traced:
                backend = [
                    f"{row['variants'][n]['backend_cpu_us_per_request']:.0f}"
                    for n in traced
                    if (row["variants"].get(n) or {}).get("backend_cpu_us_per_request") is not None
                ]
                cells.append(" / ".join(backend) or "–")
            out.append(f"| {service} | " + " | ".join(cells) + " |")
        out.append("")
    out += [
        "`–`: no figure, because the variant and its baseline share no settled round in any start (the harness's "
        "steady-state test did not pass for one of them within the profile's rounds), and an unsettled ratio is "
        "not reported; a longer profile (more rounds per start) fills these cells. A figure without an interval "
        "comes from one start (one startup each). `n/a`: the variant does not apply to the framework.",
        "",
    ]
    return "\n".join(out)


def page(doc: dict, run_link: str) -> str:
    """The published page: where the figures come from, then the tables."""
    rk = doc.get("ranking") or {}
    method = rk.get("method") or {}
    head = [
        "<!-- Generated by `python -m bench observability RUN.json --publish` (make bench-observability); "
        "do not edit. -->",
        "# What observability costs",
        "",
        f"Run `{doc.get('run_id')}` ([run.json]({run_link})), `{doc.get('command') or 'python -m bench'}`: every "
        f"service bare under {doc['limits']['cpus']} CPUs and {doc['limits']['memory_bytes'] // 2**20} MiB, its "
        f"baseline and each variant started {method.get('blocks', '?')} "
        f"time{'' if method.get('blocks') == 1 else 's'}, {method.get('rounds', '?')} "
        "interleaved rounds per start; each cell is the variant against its own baseline, per round of each "
        "start, with its 95 % hierarchical bootstrap interval (bench/ranking.py, bench/observability.py). "
        f"Machine: {doc.get('machine', {}).get('cpu_model', '?')}, {doc.get('machine', {}).get('cpus', '?')} CPUs.",
        "",
    ]
    return "\n".join(head) + markdown(rk.get("observability"))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench observability")
    p.add_argument("run", type=Path, help="a run file (run.json) or its directory")
    p.add_argument("--publish", type=Path, metavar="PATH", help="write the page here and the run file beside it")
    a = p.parse_args(argv)
    run = a.run / "run.json" if a.run.is_dir() else a.run
    doc = json.loads(run.read_text())
    if doc.get("profile", {}).get("blocks"):  # recomputed by this commit's code, like `python -m bench publish`
        ranking.apply(doc)
        apply(doc)
    if not a.publish:
        print(markdown((doc.get("ranking") or {}).get("observability")), end="")
        return 0
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    runs = a.publish.parent / "observability"
    runs.mkdir(parents=True, exist_ok=True)
    dest = runs / f"{doc.get('run_id', 'run')}-{commit or 'unknown'}.json"
    dest.write_text(json.dumps(doc, indent=1))
    a.publish.write_text(page(doc, f"{runs.name}/{dest.name}"))
    print(f"wrote {a.publish} and {dest}")
    return 0
