"""The published run: one run file turned into docs/results/<date>-<commit>/ and README.md's "Results at
a glance" (`make bench-publish`; `python -m bench publish RUN_DIR`).

    docs/results/<date>-<commit>/run.json      the run file, as the harness wrote it
    docs/results/<date>-<commit>/report.html   its report
    docs/results/<date>-<commit>/charts/*.svg  CPU per request and startup, per service
    docs/results/<date>-<commit>/results.md    the tables below, dated, with the commit, machine, limits, command
    docs/results/latest                        a link to the newest of them

Every table comes from the run file; README.md's copy of the glance table is written and drift-checked by
scripts/results_table.py. Per service the figures are those of its image (what a deployment runs), with
the bare run's and the image's without AOT cache startup beside them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from cityref_tools import descriptors

from . import report, resilience_report
from .metrics import at_fixed, band, wide

STUDY = Path(__file__).with_name("study2020.yaml")
OVERLOAD = ("memory_working_set_bytes", "memory_per_connection_bytes", "error_ratio", "oom_kills", "memory_peak_bytes")
PUBLISHED = "docs/results"


def _med(b: dict | None) -> float | None:
    return b["median"] if b else None


def _inverse(per_cpu_s: float | None) -> float | None:
    """CPU µs per request from requests per CPU-second."""
    return 1e6 / per_cpu_s if per_cpu_s else None


def _value(impl: dict, key: str) -> float | None:
    """A figure of the study's (bench/study2020.yaml), or None where it gives none."""
    return (impl.get(key) or {}).get("value")


def _services(doc: dict) -> list[str]:
    seen: list[str] = []
    for r in doc["results"]:
        svc = (r.get("meta") or {}).get("service")
        if svc and svc not in seen:
            seen.append(svc)
    return seen


def _open_band(runs: list[dict], key: str) -> dict | None:
    """The open-loop step's latency percentile over the repeats (the profile's first rate)."""
    vals = []
    for r in runs:
        s = next((s for s in r["steps"] if s["kind"] == "open"), None) if r["status"] == "ok" else None
        vals.append(s["latency_ms"][key] if s else None)
    return band(vals)


def _image_size(runs: list[dict]) -> float | None:
    return next(((r.get("info") or {}).get("image_size_bytes") for r in runs if r.get("info")), None)


def _died(runs: list[dict], n: int) -> dict | None:
    """A target whose every repeat died during its load steps (e.g. out of memory at 2048 connections): a
    summary of the steps it finished, for a row that shows them and says where it died. None otherwise."""
    if not runs or any(r["status"] == "ok" for r in runs):
        return None
    done = [r for r in runs if any(s["kind"] == "step" for s in r["steps"])]
    fixed = [at_fixed([s for s in r["steps"] if s["kind"] == "step"], n) for r in done]
    if not any(f["cpu_us_per_request"] for f in fixed):
        return None
    return {
        "target": done[0]["target"],
        "ok": 0,
        "died": "; ".join(sorted({r["reason"] for r in done})),
        "at_fixed": {k: band([f[k] for f in fixed]) for k in ("cpu_us_per_request", "p50_ms", "p99_ms")},
        "startup_s": band([r["startup_s"] for r in done]),
        "memory_idle_working_set_bytes": band([r.get("memory_after_startup_working_set_bytes") for r in done]),
        "warmup": report.warmup_summary(done),
        "requests_per_cpu_s": None,
    }


def service_rows(doc: dict) -> list[dict]:
    """One row per service: the glance table's figures, bands where the run has repeats. A service whose
    targets all died during their load steps gets the figures of the steps they finished, and says so."""
    summary = {r["target"]: r for r in report.summary(doc)}
    runs: dict[str, list[dict]] = {}
    for r in doc["results"]:
        runs.setdefault(r["target"], []).append(r)
    n = report.fixed_connections(doc)
    for name, rs in runs.items():
        died = _died(rs, n)
        if died:
            summary[name] = died
    floor = next((r for r in summary.values() if r.get("kind") == "floor"), None)
    floor_cpu = _med(floor["at_fixed"]["cpu_us_per_request"]) if floor else None
    price = doc["options"]["price_per_vcpu_hour_usd"]
    descs = {d["name"]: d for d in descriptors.all_services()}
    rows = []
    for svc in _services(doc):
        bare, img, no_aot = (summary.get(n) for n in (svc, f"{svc} (image)", f"{svc} (image, no AOT)"))
        main = next((t for t in (img, bare) if t and (t["ok"] or t.get("died"))), None)
        if not main:
            rows.append({"service": svc, "failed": (bare or img or {}).get("failures") or ["not run"]})
            continue
        name = main["target"]
        fixed, cpu = main["at_fixed"], main["at_fixed"]["cpu_us_per_request"]
        over = main.get("overload") or dict.fromkeys(OVERLOAD, None)
        alone = main.get("framework_only") or {"cpu_us_per_request": None}
        rows.append(
            {
                "service": svc,
                "target": name,
                "framework": descs.get(svc, {}).get("framework", ""),
                "cpu_us": cpu,
                "cpu_wide": wide(cpu),
                "x_floor": _med(cpu) / floor_cpu if _med(cpu) and floor_cpu else None,
                "req_per_core_s": 1e6 / _med(cpu) if _med(cpu) else None,
                "p50_ms": fixed["p50_ms"],
                "p99_ms": fixed["p99_ms"],
                "open_p50_ms": _open_band(runs[name], "p50"),
                "open_p99_ms": _open_band(runs[name], "p99"),
                "startup_bare_s": bare["startup_s"] if bare else None,
                "startup_image_s": img["startup_s"] if img else None,
                "startup_no_aot_s": no_aot["startup_s"] if no_aot else None,
                "image_size_bytes": _image_size(runs.get(f"{svc} (image)", [])),
                "memory_idle_bytes": main["memory_idle_working_set_bytes"],
                "memory_overload_bytes": over["memory_working_set_bytes"],
                "memory_per_connection_bytes": over["memory_per_connection_bytes"],
                "errors_overload": over["error_ratio"],
                "oom_kills": over["oom_kills"],
                "cost_per_billion_usd": 1e9 * _med(cpu) / 1e6 / 3600 * price if _med(cpu) else None,
                "framework_cpu_us": alone["cpu_us_per_request"],
                "warmup": main["warmup"],
                "whole_run_cpu_us": _inverse(_med(main["requests_per_cpu_s"])),
                "died": main.get("died"),
            }
        )
    best = min((_med(r["cpu_us"]) for r in rows if "cpu_us" in r and _med(r["cpu_us"])), default=None)
    for r in rows:
        if "cpu_us" in r:
            r["x_best"] = _med(r["cpu_us"]) / best if best and _med(r["cpu_us"]) else None
    return sorted(rows, key=lambda r: _med(r.get("cpu_us")) or float("inf"))


# ---------------------------------------------------------------- Markdown


def _num(v: float | None, digits: int = 0, unit: str = "") -> str:
    return "–" if v is None else f"{v:,.{digits}f}{unit}".replace(",", " ")


def _b(b: dict | None, digits: int = 0, scale: float = 1.0) -> str:
    """A band as `median (min–max)` when the repeats differ."""
    if not b:
        return "–"
    med = _num(b["median"] * scale, digits)
    if b["n"] > 1 and round(b["min"] * scale, digits) != round(b["max"] * scale, digits):
        return f"{med} ({_num(b['min'] * scale, digits)}–{_num(b['max'] * scale, digits)})"
    return med


def _mib(b: dict | None) -> str:
    return _b(b, 1, 1 / 2**20)


def _per_connection(b: dict | None) -> str:
    """KiB per connection; a working set that shrank over the step (noise at few connections) shows as 0."""
    if b:
        b = dict(b, median=max(b["median"], 0), min=max(b["min"], 0), max=max(b["max"], 0))
    return _b(b, 1, 1 / 1024)


def _errors(r: dict) -> str:
    """Errors at the overload step, or that the target died in its load steps (every repeat)."""
    if r.get("died"):
        return "died (every repeat)"
    return _num(_med(r["errors_overload"]) * 100 if r["errors_overload"] else None, 1, " %")


def _warm(w: dict | None) -> str:
    if not w:
        return "–"
    s = _num(_med(w["seconds"]))
    return s + (" ⚑" if w["capped"] else "")


def facts(doc: dict, command: str = "python -m bench --profile") -> str:
    """The line that dates a table: run, commit, machine, limits, profile, command."""
    m, lim = doc["machine"], doc["limits"]
    return (
        f"Run {doc['run_id']} ({doc['started'][:10]}) at commit {m['git']}, {m['cpu_model']}, {m['cpus']} cores, "
        f"cgroup {m['cgroup']}; each target {lim['cpus']:g} CPUs / {lim['memory_bytes'] // 2**20} MiB; "
        f"`{doc.get('command') or command + ' ' + doc['profile']['name']}`."
    )


def glance_markdown(doc: dict) -> str:
    """README.md's "Results at a glance": one row per service, the figures of its image."""
    n = report.fixed_connections(doc)
    top = report.overload_connections(doc)
    rate = (doc["profile"].get("open_rates") or [None])[0]
    price = doc["options"]["price_per_vcpu_hour_usd"]
    head = (
        f"| service | framework | CPU µs/request at {n} | CPU × best | CPU × floor | requests/s per core "
        f"| p50 / p99 at {n} (ms) | p50 / p99 at {rate} req/s (ms) | startup bare / image / no AOT (s) "
        f"| image (MB) | working set idle / at {top} (MiB) | per connection (KiB) | errors at {top} "
        f"| $ per 10⁹ requests | warm-up (s) |\n" + "|---" * 15 + "|\n"
    )
    body = []
    for r in service_rows(doc):
        if "failed" in r:
            body.append(f"| {r['service']} | failed: {'; '.join(r['failed'])[:120]} |" + " |" * 13)
            continue
        cpu = _b(r["cpu_us"], 1) + (" ⚠" if r["cpu_wide"] else "")
        startup = " / ".join(_num(_med(r[k]), 2) for k in ("startup_bare_s", "startup_image_s", "startup_no_aot_s"))
        label = r["service"] + ("" if r["target"].endswith("(image)") else " (bare: its image failed)")
        label += " ⚠ died" if r.get("died") else ""
        body.append(
            f"| {label} | {r['framework']} | {cpu} | {_num(r['x_best'], 2)} | {_num(r['x_floor'], 2)} "
            f"| {_num(r['req_per_core_s'])} | {_num(_med(r['p50_ms']), 1)} / {_num(_med(r['p99_ms']), 1)} "
            f"| {_num(_med(r['open_p50_ms']), 1)} / {_num(_med(r['open_p99_ms']), 1)} | {startup} "
            f"| {_num(r['image_size_bytes'] / 1e6 if r['image_size_bytes'] else None, 1)} "
            f"| {_mib(r['memory_idle_bytes'])} / {_mib(r['memory_overload_bytes'])} "
            f"| {_per_connection(r['memory_per_connection_bytes'])} "
            f"| {_errors(r)} | {_num(r['cost_per_billion_usd'], 2)} | {_warm(r['warmup'])} |"
        )
    note = (
        f"\n{facts(doc)} Figures of each service's image, median (min–max) of the repeats; ⚠: the repeats "
        f"differ by more than {report.SPREAD_LIMIT:.0%}, so the row cannot be ranked against its neighbours on "
        f"CPU; ⚑: the warm-up reached its cap before CPU per request settled. CPU × best and × floor: CPU per "
        f"request as a multiple of the cheapest service's and of the nginx floor's (the same hop, proxied). "
        f"Requests/s per core = 10⁶ / CPU µs per request; $ per 10⁹ requests at ${price} per core-hour; "
        "working set = cgroup usage less inactive file cache (raw usage in run.json); "
        f"per connection = (working set after the {top}-connection step − "
        f"idle) / {top}; the open-loop rate is the same for every target.\n"
    )
    return head + "\n".join(body) + "\n" + note


def framework_markdown(doc: dict) -> str:
    n = report.fixed_connections(doc)
    lines = [
        f"| service | framework only: CPU µs/request at {n} (GET /health) | city lookup | difference: "
        "Elasticsearch client and service code | share of the lookup |",
        "|---|---|---|---|---|",
    ]
    for r in service_rows(doc):
        if "failed" in r or not r["framework_cpu_us"]:
            continue
        alone, full = _med(r["framework_cpu_us"]), _med(r["cpu_us"])
        lines.append(
            f"| {r['service']} | {_b(r['framework_cpu_us'], 1)} | {_b(r['cpu_us'], 1)} | {_num(full - alone, 1)} "
            f"| {_num((full - alone) / full * 100, 0, ' %')} |"
        )
    return "\n".join(lines) + "\n"


def study_markdown(doc: dict, study: dict | None = None) -> str:
    """The services the 2020 study measured, its figures beside this run's (whole-run CPU per request, as
    the study computed it, with startup included)."""
    study = study or yaml.safe_load(STUDY.read_text(encoding="utf-8"))
    ours = {r["service"]: r for r in service_rows(doc) if "failed" not in r}
    summary = {r["target"]: r for r in report.summary(doc)}
    ref = ours.get("rust-actix", {}).get("whole_run_cpu_us")
    top = report.overload_connections(doc)
    lines = [
        f"| service | CPU µs/request, whole run: 2020 → now | × Actix: 2020 → now | startup (s): 2020 → now "
        f"| memory high-water at 2048 (MiB): 2020 → at {top} now | errors at 2048: 2020 → at {top} now |",
        "|---|---|---|---|---|---|",
    ]
    for impl in study["implementations"]:
        svc = impl.get("maps_to")
        if not svc or svc not in ours:
            continue
        r, s = ours[svc], summary.get(ours[svc]["target"])
        cpu_then = _value(impl, "cpu_ms_per_request")
        lines.append(
            f"| {svc} ({impl['name']} in 2020) | {_num(cpu_then * 1000 if cpu_then else None)} → "
            f"{_num(r['whole_run_cpu_us'])} | {_num(_value(impl, 'cpu_ratio_to_actix'), 1)} → "
            f"{_num(r['whole_run_cpu_us'] / ref if ref and r['whole_run_cpu_us'] else None, 1)} "
            f"| {_num(_value(impl, 'startup_s'), 3)} → {_num(_med(r['startup_image_s']), 2)} "
            f"| {_num(_value(impl, 'memory_max_mib'), 0)} → {_mib(s['overload']['memory_peak_bytes'] if s else None)} "
            f"| {_num(_value(impl, 'errors_at_max_connections'), 1, ' %')} → "
            f"{_errors(r)} |"
        )
    info = study["study"]
    return (
        "\n".join(lines) + f"\n\n2020: [{info['title']}]({info['url']}) ({info['author']}, {info['date']}), "
        "its figures in bench/study2020.yaml with their sources: Docker containers on a 4-vCPU cloud VM with "
        "Elasticsearch on a second VM, JDK 11, 1.5 CPUs / 512 MiB, 10 s steps from 1 to 2048 connections; now: "
        "this run's images, Elasticsearch on the same 2-core machine. Whole-run CPU per request counts startup "
        "and warm-up, as the study's did.\n"
    )


def resilience_markdown(res: dict) -> str:
    """A resilience run's tables (python -m bench resilience), dated by its own run and commit."""
    return (
        f"{facts(res, 'python -m bench resilience --profile')} Method: "
        "[bench/README.md](../../../bench/README.md#resilience-make-bench-resilience); the run file without its "
        f"raw samples: [resilience.json](resilience.json).\n\n{resilience_report.markdown(res)}"
    )


def results_markdown(doc: dict, res: dict | None = None) -> str:
    return (
        f"# Published run {doc['run_id']}\n\n"
        "Generated by `python -m bench publish` from [run.json](run.json); the full report: "
        "[report.html](report.html). Method and every figure's definition: "
        "[bench/README.md](../../../bench/README.md).\n\n"
        "![CPU per request](charts/cpu-per-request.svg)\n![Startup](charts/startup.svg)\n\n"
        f"## At a glance\n\n{glance_markdown(doc)}\n"
        f"## The framework's own cost\n\n{framework_markdown(doc)}\n"
        f"## Beside the 2020 study\n\n{study_markdown(doc)}"
        + (f"\n## Resilience\n\n{resilience_markdown(res)}" if res else "")
    )


def readme_block(results: Path, link_prefix: str = "docs/results") -> str:
    """README.md's "Results at a glance": from results/latest/run.json, or where to get one."""
    latest = results / "latest"
    if not (latest / "run.json").exists():
        return "No run is published yet: `make bench-publish` makes one (about an hour, as root).\n"
    doc = json.loads((latest / "run.json").read_text())
    where = f"{link_prefix}/{latest.resolve().name}"
    return (
        f"From the published run, [{where}/]({where}/results.md) (its report, charts, run file and the "
        "framework-only figures).\n\n"
        f"![CPU per request]({where}/charts/cpu-per-request.svg)\n\n"
        f"{glance_markdown(doc)}\n"
        f"Beside the 2020 study this repository descends from:\n\n{study_markdown(doc)}"
    )


def charts(doc: dict) -> dict[str, str]:
    rows = [r for r in service_rows(doc) if "failed" not in r]
    summary = {r["target"]: r for r in report.summary(doc)}
    n = report.fixed_connections(doc)
    cpu, startup = [], []
    for r in rows:
        for name, color in ((r["service"], "#1f77b4"), (f"{r['service']} (image)", "#ff7f0e")):
            s = summary.get(name)
            if s and s["ok"]:
                cpu.append((name, _med(s["at_fixed"]["cpu_us_per_request"]), color))
        for key, label, color in (
            ("startup_bare_s", "bare", "#1f77b4"),
            ("startup_image_s", "image", "#ff7f0e"),
            ("startup_no_aot_s", "image, no AOT", "#2ca02c"),
        ):
            if r[key]:
                startup.append((f"{r['service']} ({label})", _med(r[key]) * 1000, color))
    floor = next((s for s in summary.values() if s["kind"] == "floor"), None)
    ref = _med(floor["at_fixed"]["cpu_us_per_request"]) if floor else None
    return {
        "cpu-per-request.svg": report.standalone_svg(
            report.bar_chart(
                f"CPU per request at {n} connections (dashed: the nginx floor)", cpu, "µs", lambda v: f"{v:.1f} µs", ref
            )
        ),
        "startup.svg": report.standalone_svg(
            report.bar_chart("Startup: launch → first HTTP response", startup, "milliseconds", lambda v: f"{v:.0f} ms")
        ),
    }


def publish(run_dir: Path, dest_root: Path, resilience_dir: Path | None = None) -> Path:
    """Copies the run into dest_root/<date>-<commit>/ with its charts and results.md; points `latest` at it.
    `resilience_dir`: a resilience run to publish beside it (its tables, and its run file without the raw
    samples as resilience.json)."""
    doc = json.loads((run_dir / "run.json").read_text())
    res = json.loads((resilience_dir / "run.json").read_text()) if resilience_dir else None
    dest = dest_root / f"{doc['started'][:10]}-{doc['machine']['git'].replace('+dirty', '-dirty')}"
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "charts").mkdir(parents=True)
    shutil.copy2(run_dir / "run.json", dest / "run.json")
    shutil.copy2(run_dir / "report.html", dest / "report.html")
    for name, svg in charts(doc).items():
        (dest / "charts" / name).write_text(svg)
    if res:
        for rec in res["resilience"]:
            for key in [k for k in rec if k.startswith("samples")]:
                del rec[key]
        (dest / "resilience.json").write_text(json.dumps(res, indent=1))
    (dest / "results.md").write_text(results_markdown(doc, res))
    latest = dest_root / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(dest.name)
    return dest


def spread_summary(doc: dict) -> list[str]:
    """The services whose CPU figure cannot be ranked (band over 5 %), for the command's output."""
    return [r["service"] for r in service_rows(doc) if r.get("cpu_wide")]
