"""The published run: one run file turned into docs/results/<date>-<commit>/ and README.md's "Results at
a glance" (`make bench-publish`; `python -m bench publish RUN_DIR`).

    docs/results/<date>-<commit>/run.json      the run file, as the harness wrote it (a block-method run: its
                                               ranking and summary recomputed by the publishing commit's
                                               bench/ranking.py, so that page, report and code agree)
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
import statistics
from pathlib import Path

import yaml

from cityref_tools import descriptors

from . import ranking, report
from .metrics import at_fixed, band, wide
from .resilience import report as resilience_report

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
    """The open-loop step's latency percentile over the repeats (the profile's first rate); in a block-method
    run, the fixed-rate step's, the median over each start's rounds."""
    vals = []
    for r in runs:
        if r["status"] != "ok":
            vals.append(None)
            continue
        s = next((s for s in r["steps"] if s["kind"] == "open"), None)
        rate = [x["latency_ms"][key] for x in r["steps"] if x["kind"] == "rate"]
        vals.append(s["latency_ms"][key] if s else statistics.median(rate) if rate else None)
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
    _attach_ranking(doc, rows)
    best = min((_med(r["cpu_us"]) for r in rows if "cpu_us" in r and _med(r["cpu_us"])), default=None)
    for r in rows:
        if "cpu_us" in r:
            r["x_best"] = _med(r["cpu_us"]) / best if best and _med(r["cpu_us"]) else None
    if doc.get("ranking"):
        return sorted(
            rows,
            key=lambda r: ((r.get("closed") or {}).get("rank") or 99, (r.get("closed") or {}).get("median") or 1e18),
        )
    return sorted(rows, key=lambda r: _med(r.get("cpu_us")) or float("inf"))


def _attach_ranking(doc: dict, rows: list[dict]) -> None:
    """A block-method run: each service's rank, tie, interval and levels at both ranking steps (of the
    target its row shows), and why it is not ranked where it is not."""
    rk = doc.get("ranking")
    if not rk:
        return
    for row in rows:
        if "target" not in row:
            continue
        for step in ("closed", "rate"):
            st = rk["steps"].get(step)
            if not st:
                continue
            found = next((x for x in st["rows"] if x["target"] == row["target"]), None)
            if found is None:
                u = next((x for x in st["unranked"] if x["target"] == row["target"]), None)
                row[step] = {"rank": None, "why": u["why"] if u else "not measured", **(u or {})}
            else:
                row[step] = found


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


def _ci(fig: dict | None, digits: int = 1) -> str:
    """A ranking figure as `median [low–high]` (its 95 % interval), with its starts' levels where they differ."""
    if not fig or fig.get("median") is None:
        return "–"
    out = _num(fig["median"], digits)
    if fig.get("interval"):
        lo, hi = fig["interval"]
        out += f" [{_num(lo, digits)}–{_num(hi, digits)}]"
    if fig.get("levels"):
        out += " · levels " + ", ".join(
            f"{_num(lv['level'], digits)} ({lv['starts']}/{fig['settled']})" for lv in fig["levels"]
        )
    return out


def _rank(fig: dict | None) -> str:
    if not fig or not fig.get("rank"):
        return "not ranked" + (f": {fig['why']}" if fig and fig.get("why") else "")
    return f"{fig['rank']}{' =' if fig.get('tied') else ''}"


def aa_line(doc: dict) -> str:
    """The A/A control's sentence: the pair's ratio per round with its interval, and their medians."""
    aa = (doc.get("ranking") or {}).get("aa")
    if not aa:
        return "No A/A pair in this run."
    a, b = aa["targets"]
    verdict = "within" if not ranking.aa_problems(aa) else "OUTSIDE"
    first, second = ({"median": m, "interval": i} for m, i in zip(aa["medians"], aa["intervals"], strict=True))
    return (
        f"A/A control: {b} against {a}, the same image started as two targets: CPU per request ratio "
        f"{_ci(aa.get('ratio'), 3)} per round; medians {_ci(first)} and {_ci(second)} µs, {verdict} the "
        f"±{ranking.AA_LIMIT:.0%} limit `python -m bench check` holds a published run to."
    )


def ranked_glance_markdown(doc: dict) -> str:
    """The glance table of a block-method run: ranks with ties, 95 % intervals, both ranking steps."""
    p = doc["profile"]
    n, top, rate, conns = p["fixed_connections"], report.overload_connections(doc), p["rate"], p["rate_connections"]
    price = doc["options"]["price_per_vcpu_hour_usd"]
    head = (
        f"| rank at {n} | service | framework | CPU µs/request at {n} connections [95 % interval] | × best | × floor "
        f"| rank at {rate} req/s | CPU µs/request at {rate} req/s, ≤ {conns} connections [95 %] "
        f"| p50 / p99 at {n} (ms) | p50 / p99 at {rate} req/s (ms) | startup (s) | image (MB) "
        f"| working set idle / at {top} (MiB) | errors at {top} | $ per 10⁹ requests | warm-up (s) |\n"
        + "|---" * 16
        + "|\n"
    )
    body = []
    for r in service_rows(doc):
        if "failed" in r:
            body.append(f"| – | {r['service']} | failed: {'; '.join(r['failed'])[:120]} |" + " |" * 13)
            continue
        c, f = r.get("closed"), r.get("rate")
        vs_best = (c or {}).get("vs_best")
        vs_floor = (c or {}).get("vs_floor")
        startup = _b(r["startup_image_s"] if r["target"].endswith("(image)") else r["startup_bare_s"], 2)
        label = r["service"] + ("" if r["target"].endswith("(image)") else " (bare)")
        body.append(
            f"| {_rank(c)} | {label} | {r['framework']} | {_ci(c)} "
            f"| {_ci(vs_best, 2) if vs_best else ('1' if (c or {}).get('rank') == 1 else '–')} | {_ci(vs_floor, 2)} "
            f"| {_rank(f)} | {_ci(f)} "
            f"| {_num(_med(r['p50_ms']), 1)} / {_num(_med(r['p99_ms']), 1)} "
            f"| {_num(_med(r['open_p50_ms']), 1)} / {_num(_med(r['open_p99_ms']), 1)} | {startup} "
            f"| {_num(r['image_size_bytes'] / 1e6 if r['image_size_bytes'] else None, 1)} "
            f"| {_mib(r['memory_idle_bytes'])} / {_mib(r['memory_overload_bytes'])} "
            f"| {_errors(r)} | {_num(r['cost_per_billion_usd'], 2)} | {_warm(r['warmup'])} |"
        )
    m = doc["ranking"]["method"]
    note = (
        f"\n{facts(doc)} {aa_line(doc)}\n\n"
        f"Method: {m['blocks']} starts of every target (blocks), each measured in {m['rounds']} rounds that visit "
        "every target once in a fresh seeded random order. A figure is the median over the starts of each "
        "start's median round; [ ]: its 95 % interval, a hierarchical bootstrap (starts, then rounds). "
        "Levels: starts that settled more than "
        f"{m['level_gap']:.0%} apart, with how many starts settled at each. Rank: two neighbours are ranked apart "
        "only where the 95 % interval of their CPU ratio, taken within each round, excludes 1; `=` marks a "
        "tie. × best and × floor: the same per-round ratio to the cheapest service and to the nginx floor (the "
        f"same hop, proxied). The {rate} req/s step offers a fixed rate over at most {conns} connections (vegeta), "
        "the method of HttpArena's efficiency profile, so its CPU µs per request reads beside theirs (theirs "
        f"holds all {conns} connections open); a target that "
        f"delivered less than {1 - m['rate_shortfall']:.0%} of it in a round is not ranked there. Steady state: "
        f"{m['settle']}. $ per 10⁹ requests at ${price} per core-hour, from the figure at {n}; working set = "
        "cgroup usage less inactive file cache.\n"
    )
    return head + "\n".join(body) + "\n" + note


def glance_markdown(doc: dict) -> str:
    """README.md's "Results at a glance": one row per service, the figures of its image."""
    if doc.get("ranking"):
        return ranked_glance_markdown(doc)
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


def deaths_markdown(doc: dict) -> str:
    """Every target that died during the run, with its evidence (exit code, OOM verdict, its log's last lines)."""
    dead = [r for r in doc["results"] if r["status"] == "died"]
    if not dead:
        return "No target died during the run.\n"
    unit = "block" if doc["profile"].get("blocks") else "repeat"
    out = []
    for r in dead:
        d = r.get("death") or {}
        tail = "\n".join(d.get("log_tail") or []) or "(empty log)"
        out.append(
            f"- **{r['target']}** ({unit} {r['repeat'] + 1}): {r['reason']}; {report.death_text(d)}\n\n"
            f"  ```text\n" + "".join(f"  {line}\n" for line in tail.splitlines()) + "  ```\n"
        )
    return "\n".join(out)


def results_markdown(doc: dict, res: dict | None = None) -> str:
    return (
        f"# Published run {doc['run_id']}\n\n"
        "Generated by `python -m bench publish` from [run.json](run.json); the full report: "
        "[report.html](report.html). Method and every figure's definition: "
        "[bench/README.md](../../../bench/README.md).\n\n"
        "![CPU per request](charts/cpu-per-request.svg)\n![Startup](charts/startup.svg)\n\n"
        f"## At a glance\n\n{glance_markdown(doc)}\n"
        f"## Deaths\n\n{deaths_markdown(doc)}\n"
        f"## The framework's own cost\n\n{framework_markdown(doc)}\n"
        f"## Beside the 2020 study\n\n{study_markdown(doc)}"
        + (f"\n## Resilience\n\n{resilience_markdown(res)}" if res else "")
    )


def published_problems(results: Path) -> list[str]:
    """Why the published run cannot stand behind README.md's glance table: it has no ranking (ranks, ties
    and intervals come from the block method) or no A/A control for the dated line. Whether the control is
    within its limit is `python -m bench check`'s verdict on the run; the table shows it either way."""
    run = results / "latest" / "run.json"
    if not run.exists():
        return []
    doc = json.loads(run.read_text())
    if not doc.get("ranking"):
        return [f"{run}: no ranking (ranks, ties, intervals): publish a block-method run, make bench-publish"]
    if not doc["ranking"].get("aa"):
        return [f"{run}: no A/A control for the README's dated line"]
    return []


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
    if doc["profile"].get("blocks"):
        ranking.apply(doc)
        doc["summary"] = report.summary(doc)
        (dest / "run.json").write_text(json.dumps(doc, indent=1))
        (dest / "report.html").write_text(report.html(doc))
    else:
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
