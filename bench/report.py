"""The run's summary (also stored in the JSON) and the self-contained HTML report with inline SVG charts."""

from __future__ import annotations

import html as _html
import math
from collections import OrderedDict
from collections.abc import Callable, Iterable

from .metrics import FIXED_CONNECTIONS, SPREAD_LIMIT, at_fixed, band, overload, ratio, wide
from .targets import death_words

PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
]
SUMMARY_KEYS = [
    "peak_rps",
    "cpu_us_per_request_at_peak",
    "requests_per_cpu_s",
    "cost_per_billion_usd",
    "memory_peak_bytes_last_step",
    "error_ratio",
]
FIXED_KEYS = ["rps", "cpu_us_per_request", "requests_per_cpu_s", "p50_ms", "p99_ms", "error_ratio"]
OVERLOAD_KEYS = [
    "rps",
    "error_ratio",
    "socket_errors",
    "p99_ms",
    "memory_peak_bytes",
    "memory_working_set_bytes",
    "memory_per_connection_bytes",
    "oom_kills",
]


def _by_target(doc: dict) -> OrderedDict[str, list[dict]]:
    groups: OrderedDict[str, list[dict]] = OrderedDict()
    for t in doc.get("targets", []):
        groups[t["name"]] = []
    for r in doc["results"]:
        groups.setdefault(r["target"], []).append(r)
    return groups


def fixed_connections(doc: dict) -> int:
    return doc["profile"].get("fixed_connections", FIXED_CONNECTIONS)


def overload_connections(doc: dict) -> int | None:
    return max(doc["profile"]["connections"], default=None)


def _block(r: dict, name: str, fixed_n: int) -> dict | None:
    """One figure block of a result's totals (at_fixed, overload); a run file of schema 1 has none,
    so it is computed from the result's steps."""
    if name in r["totals"]:
        return r["totals"][name]
    if name == "framework_only":  # a run file from before the framework-only step
        return None
    closed = [s for s in r["steps"] if s["kind"] == "step"]
    return at_fixed(closed, fixed_n) if name == "at_fixed" else overload(closed)


def _section(ok: list[dict], name: str, keys: list[str], connections: int | None, fixed_n: int) -> dict:
    """Bands over the repeats of each figure of one block."""
    blocks = [_block(r, name, fixed_n) or {} for r in ok]
    out: dict = {"connections": connections}
    for key in keys:
        out[key] = band([b.get(key) for b in blocks])
    return out


def warmup_summary(ok: list[dict]) -> dict | None:
    """The warm-up over the repeats: modes, seconds (a band), how many converged and hit the cap."""
    recs = [r["warmup"] for r in ok if r.get("warmup")]
    if not recs:
        return None
    return {
        "modes": sorted({w["mode"] for w in recs}),
        "seconds": band([w["seconds"] for w in recs]),
        "converged": sum(1 for w in recs if w.get("converged")),
        "capped": sum(1 for w in recs if w.get("capped")),
        "n": len(recs),
    }


def _scaled(b: dict | None, ref: float | None) -> dict | None:
    """A band divided by a reference value (the floor's median): the spread does not change."""
    if not b or not ref:
        return None
    return dict(b, median=b["median"] / ref, min=b["min"] / ref, max=b["max"] / ref)


def _median(b: dict | None) -> float | None:
    return b["median"] if b else None


BASELINE_ERRORS = 0.01  # a floor or ceiling with more errors than this in a step is no yardstick there


def baseline_failed(row: dict) -> bool:
    """A floor or ceiling that failed its own overload step (errors above BASELINE_ERRORS): Elasticsearch
    rejects what an unbounded nginx passes on, while the services bound their requests in flight to 64."""
    err = _median((row.get("overload") or {}).get("error_ratio"))
    return row["kind"] in ("floor", "ceiling") and err is not None and err > BASELINE_ERRORS


def _floor_ratios(rows: list[dict]) -> None:
    """Fixed-count requests per CPU-second relative to the floor's median, and whole-run ones unless the
    floor failed a step (then its whole run is no yardstick: the ratio is left out)."""
    floor = next((r for r in rows if r["kind"] == "floor" and r["requests_per_cpu_s"]), None)
    whole = _median(floor["requests_per_cpu_s"]) if floor and not baseline_failed(floor) else None
    fixed = _median(floor["at_fixed"]["requests_per_cpu_s"]) if floor else None
    for row in rows:
        row["ratio_to_floor"] = ratio(_median(row["requests_per_cpu_s"]), whole)
        row["ratio_to_floor_band"] = _scaled(row["requests_per_cpu_s"], whole)
        row["at_fixed"]["ratio_to_floor"] = _scaled(row["at_fixed"]["requests_per_cpu_s"], fixed)


def summary(doc: dict) -> list[dict]:
    """Per target: median, min-max and spread over the repeats of every headline figure — whole run,
    at the fixed connection count, at the largest one (overload) — the warm-up, the ratios to the
    floor, and whether the efficiency figure (CPU per request at the fixed count) is too spread."""
    rows = []
    n_fixed, n_over = fixed_connections(doc), overload_connections(doc)
    for name, runs in _by_target(doc).items():
        ok = [r for r in runs if r["status"] == "ok" and r.get("totals")]
        row: dict = {
            "target": name,
            "kind": runs[0]["kind"] if runs else None,
            "runs": len(runs),
            "ok": len(ok),
            "failures": [r["reason"] for r in runs if r["status"] != "ok"],
        }
        for key in SUMMARY_KEYS:
            row[key] = band([r["totals"][key] for r in ok])
        row["startup_s"] = band([r["startup_s"] for r in ok])
        row["memory_idle_working_set_bytes"] = band([r.get("memory_after_startup_working_set_bytes") for r in ok])
        row["at_fixed"] = _section(ok, "at_fixed", FIXED_KEYS, n_fixed, n_fixed)
        row["overload"] = _section(ok, "overload", OVERLOAD_KEYS, n_over, n_fixed)
        row["framework_only"] = _section(ok, "framework_only", FIXED_KEYS, n_fixed, n_fixed)
        row["warmup"] = warmup_summary(ok)
        eff = row["at_fixed"]["cpu_us_per_request"]
        row["efficiency_spread"] = eff["spread"] if eff else None
        row["efficiency_spread_wide"] = wide(eff)
        rows.append(row)
    _floor_ratios(rows)
    return rows


# ---------------------------------------------------------------- formatting


def esc(s: object) -> str:
    return _html.escape(str(s))


def fmt_num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    if abs(v) >= 10_000:
        return f"{v:,.0f}".replace(",", " ")
    return f"{v:.{digits}f}"


def fmt_bytes(v: float | None) -> str:
    return "–" if v is None else f"{v / 2**20:.1f} MiB"


def fmt_band(b: dict | None, f: Callable[[float | None], str]) -> str:
    if not b:
        return "–"
    if b["n"] > 1 and b["min"] != b["max"]:
        return f"{f(b['median'])} <span class=band>({f(b['min'])}–{f(b['max'])})</span>"
    return f(b["median"])


def nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * exp:
            return m * exp
    return 10 * exp


def short(v: float) -> str:
    if v >= 1e9:
        return f"{v / 1e9:g}G"
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


# ---------------------------------------------------------------- charts

W, H, ML, MR, MT, MB = 620, 300, 64, 16, 34, 42


def _frame(title: str, body: str, legend: str = "") -> str:
    return (
        f'<figure><svg viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{esc(title)}">'
        f'<text x="{W / 2}" y="18" class="t">{esc(title)}</text>{body}</svg>{legend}</figure>'
    )


def standalone_svg(figure: str) -> str:
    """A chart of this module as an SVG document of its own (for docs/results/: an <img> or a Markdown image
    shows it without the report's page around it)."""
    svg = figure[figure.index("<svg") : figure.rindex("</svg>") + len("</svg>")]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1).replace(
            ">", f"><style>text{{font:12px system-ui,sans-serif}}{CHART_CSS}</style>", 1
        )
        + "\n"
    )


def _legend(series: list[dict]) -> str:
    items = "".join(f'<span><i style="background:{s["color"]}"></i>{esc(s["name"])}</span>' for s in series)
    return f'<figcaption class="legend">{items}</figcaption>'


def line_chart(title: str, xlabels: list[str], series: list[dict], ylabel: str, log: bool = False) -> str:
    """series: name, color, dash, values (None = gap), lo, hi (optional band)."""
    vals = [v for s in series for v in (s["values"] + s.get("hi", [])) if v is not None and (v > 0 or not log)]
    if not vals:
        return _frame(title, f'<text x="{W / 2}" y="{H / 2}" class="t">no data</text>')
    pw, ph = W - ML - MR, H - MT - MB
    if log:
        lo_v = 10 ** math.floor(math.log10(min(vals)))
        hi_v = 10 ** math.ceil(math.log10(max(vals)))
        if hi_v <= lo_v:
            hi_v = lo_v * 10

        def y(v: float) -> float:
            return MT + ph - (math.log10(max(v, lo_v)) - math.log10(lo_v)) / (math.log10(hi_v) - math.log10(lo_v)) * ph

        ticks = [lo_v * 10**i for i in range(int(round(math.log10(hi_v / lo_v))) + 1)]
    else:
        top = nice_max(max(vals))

        def y(v: float) -> float:
            return MT + ph - v / top * ph

        ticks = [top * i / 4 for i in range(5)]
    n = len(xlabels)

    def x(i: int) -> float:
        return ML + (pw * (i + 0.5) / n)

    out = [f'<line x1="{ML}" y1="{MT + ph}" x2="{ML + pw}" y2="{MT + ph}" class="ax"/>']
    for t in ticks:
        out.append(
            f'<line x1="{ML}" y1="{y(t):.1f}" x2="{ML + pw}" y2="{y(t):.1f}" class="grid"/>'
            f'<text x="{ML - 6}" y="{y(t) + 4:.1f}" class="yl">{short(t)}</text>'
        )
    for i, lab in enumerate(xlabels):
        out.append(f'<text x="{x(i):.1f}" y="{MT + ph + 16}" class="xl">{esc(lab)}</text>')
    out.append(
        f'<text x="14" y="{MT + ph / 2}" class="yt" transform="rotate(-90 14 {MT + ph / 2})">{esc(ylabel)}</text>'
    )
    for s in series:
        if s.get("lo") and s.get("hi"):
            pts = [(x(i), y(h)) for i, h in enumerate(s["hi"]) if h is not None]
            pts += [(x(i), y(lv)) for i, lv in reversed(list(enumerate(s["lo"]))) if lv is not None]
            if pts:
                out.append(
                    f'<polygon points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}" '
                    f'fill="{s["color"]}" opacity="0.15"/>'
                )
        segs, cur = [], []
        for i, v in enumerate(s["values"]):
            if v is None or (log and v <= 0):
                if cur:
                    segs.append(cur)
                cur = []
            else:
                cur.append(f"{x(i):.1f},{y(v):.1f}")
        if cur:
            segs.append(cur)
        dash = ' stroke-dasharray="6 3"' if s.get("dash") else ""
        for seg in segs:
            out.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{s["color"]}" stroke-width="2"{dash}/>')
            for p in seg:
                a, b = p.split(",")
                out.append(f'<circle cx="{a}" cy="{b}" r="2.5" fill="{s["color"]}"/>')
    out.append(f'<text x="{ML + pw / 2}" y="{H - 6}" class="xl">connections</text>')
    return _frame(title, "".join(out), _legend(series))


def bar_chart(
    title: str,
    items: list[tuple[str, float | None, str]],
    unit: str,
    fmt: Callable[[float], str] = lambda v: f"{v:.3g}",
    ref: float | None = None,
) -> str:
    """Horizontal bars: (label, value, color); ref draws a vertical line (e.g. the floor's 1.0)."""
    items = [(lab, v, c) for lab, v, c in items]
    h = MT + 22 * len(items) + 30
    label_w = 230
    pw = W - label_w - 80
    top = nice_max(max([v for _, v, _ in items if v is not None] + [ref or 0, 1e-9]))
    out = []
    for i, (lab, v, c) in enumerate(items):
        yy = MT + 22 * i
        out.append(f'<text x="{label_w - 6}" y="{yy + 14}" class="yl">{esc(lab)}</text>')
        if v is None:
            out.append(f'<text x="{label_w + 4}" y="{yy + 14}" class="bl">n/a</text>')
            continue
        bw = max(1.0, v / top * pw)
        out.append(
            f'<rect x="{label_w}" y="{yy + 3}" width="{bw:.1f}" height="15" fill="{c}"/>'
            f'<text x="{label_w + bw + 4:.1f}" y="{yy + 15}" class="bl">{esc(fmt(v))}</text>'
        )
    if ref is not None:
        xr = label_w + ref / top * pw
        out.append(f'<line x1="{xr:.1f}" y1="{MT - 4}" x2="{xr:.1f}" y2="{h - 26}" class="ref"/>')
    out.append(f'<text x="{label_w + pw / 2}" y="{h - 8}" class="xl">{esc(unit)}</text>')
    return (
        f'<figure><svg viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{esc(title)}">'
        f'<text x="{W / 2}" y="18" class="t">{esc(title)}</text>{"".join(out)}</svg></figure>'
    )


def xy_chart(title: str, series: list[dict], xlabel: str, ylabel: str) -> str:
    """series: name, color, dash, points [(x, y)]."""
    pts = [p for s in series for p in s["points"]]
    if not pts:
        return _frame(title, f'<text x="{W / 2}" y="{H / 2}" class="t">no data</text>')
    pw, ph = W - ML - MR, H - MT - MB
    xmax, ymax = nice_max(max(p[0] for p in pts)), nice_max(max(p[1] for p in pts))

    def x(v: float) -> float:
        return ML + v / xmax * pw

    def y(v: float) -> float:
        return MT + ph - v / ymax * ph

    out = [f'<line x1="{ML}" y1="{MT + ph}" x2="{ML + pw}" y2="{MT + ph}" class="ax"/>']
    for i in range(5):
        tv, ty = xmax * i / 4, ymax * i / 4
        out.append(
            f'<line x1="{ML}" y1="{y(ty):.1f}" x2="{ML + pw}" y2="{y(ty):.1f}" class="grid"/>'
            f'<text x="{ML - 6}" y="{y(ty) + 4:.1f}" class="yl">{short(ty)}</text>'
            f'<text x="{x(tv):.1f}" y="{MT + ph + 16}" class="xl">{short(tv)}</text>'
        )
    for s in series:
        if s["points"]:
            dash = ' stroke-dasharray="6 3"' if s.get("dash") else ""
            out.append(
                f'<polyline points="{" ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in s["points"])}" '
                f'fill="none" stroke="{s["color"]}" stroke-width="2"{dash}/>'
            )
    out.append(
        f'<text x="{ML + pw / 2}" y="{H - 6}" class="xl">{esc(xlabel)}</text>'
        f'<text x="14" y="{MT + ph / 2}" class="yt" transform="rotate(-90 14 {MT + ph / 2})">{esc(ylabel)}</text>'
    )
    return _frame(title, "".join(out), _legend(series))


# ---------------------------------------------------------------- page


def _step_series(
    groups: OrderedDict[str, list[dict]],
    colors: dict,
    conns: list[int],
    get: Callable[[dict], float | None],
    skip: tuple[str, ...] = (),
) -> list[dict]:
    series = []
    for name, runs in groups.items():
        ok = [r for r in runs if r["status"] == "ok"]
        if not ok or ok[0]["kind"] in skip:
            continue
        med, lo, hi = [], [], []
        for c in conns:
            vals = []
            for r in ok:
                step = next((s for s in r["steps"] if s["kind"] == "step" and s["connections"] == c), None)
                vals.append(get(step) if step else None)
            b = band(vals)
            med.append(b["median"] if b else None)
            lo.append(b["min"] if b else None)
            hi.append(b["max"] if b else None)
        s = {"name": name, "color": colors[name], "dash": ok[0]["kind"] in ("image", "floor", "ceiling"), "values": med}
        if len(ok) > 1:
            s.update(lo=lo, hi=hi)
        series.append(s)
    return series


CHART_CSS = (
    ".t{font-size:13px;font-weight:600;text-anchor:middle}.xl{font-size:10px;text-anchor:middle;fill:#555}"
    ".yl{font-size:10px;text-anchor:end;fill:#555}.yt{font-size:10px;text-anchor:middle;fill:#555}"
    ".bl{font-size:10px;fill:#333}.ax{stroke:#888}.grid{stroke:#eee}.ref{stroke:#000;stroke-dasharray:4 3}"
)
CSS = (
    """
body{font:14px/1.4 system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:24px;color:#222;max-width:1340px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}
td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}td{white-space:nowrap}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.band{color:#888;font-size:11px}
th.group{text-align:center;border-left:2px solid #fff}
.kv td{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0;border:1px solid #eee;padding:4px}
svg text{font-family:inherit}
.legend{font-size:11px;max-width:630px}.legend span{margin-right:10px;white-space:nowrap}
.legend i{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:middle}
.fail{color:#b00}.note{color:#555;font-size:12px;max-width:1000px}
tr.wide-band{background:#fff6e0}.wide-band .warn{color:#b35900;font-weight:600}.capped{color:#b35900;font-weight:600}
.bad{color:#b00;font-weight:600}
"""
    + CHART_CSS
    + "\n"
)


def _swatch(color: str) -> str:
    return f'<i style="display:inline-block;width:10px;height:10px;background:{color}"></i> '


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def _kib(v: float | None) -> str:
    return "–" if v is None else f"{v / 1024:.1f} KiB"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.2%}"


def _warmup_cell(w: dict | None) -> str:
    if not w:
        return "–"
    cell = fmt_band(w["seconds"], lambda v: "–" if v is None else f"{v:.0f} s")
    if "stable" not in w["modes"]:
        return f"{cell} (fixed)"
    if w["capped"]:
        times = f" ×{w['capped']}" if w["n"] > 1 else ""
        cell += f' <span class=capped title="no two consecutive windows agreed before the cap">⚑ cap{times}</span>'
    return cell


def _summary_row(r: dict, color: str) -> str:
    f = r["at_fixed"]
    mark, cls = "", ""
    if r["efficiency_spread_wide"]:
        cls = ' class="wide-band"'
        mark = (
            f' <span class=warn title="CPU per request at {f["connections"]} connections varies by '
            f'{r["efficiency_spread"]:.1%} over the repeats (more than {SPREAD_LIMIT:.0%})">⚠</span>'
        )
    status = "ok" if r["ok"] == r["runs"] else f"<span class=fail>{esc('; '.join(r['failures']))}</span>"
    cells = [
        fmt_band(f["rps"], fmt_num),
        fmt_band(f["cpu_us_per_request"], lambda v: fmt_num(v, 1)) + mark,
        fmt_band(f["requests_per_cpu_s"], fmt_num),
        fmt_band(f.get("ratio_to_floor"), lambda v: fmt_num(v, 2)),
        fmt_band(f["p99_ms"], _ms),
        fmt_band(r["peak_rps"], fmt_num),
        fmt_band(r["cpu_us_per_request_at_peak"], lambda v: fmt_num(v, 1)),
        fmt_band(r["requests_per_cpu_s"], fmt_num),
        fmt_band(r.get("ratio_to_floor_band"), lambda v: fmt_num(v, 2)),
        fmt_band(r["cost_per_billion_usd"], lambda v: fmt_num(v, 2)),
        fmt_band(r["startup_s"], lambda v: "–" if v is None else f"{v * 1000:.0f} ms"),
        _warmup_cell(r.get("warmup")),
        fmt_band(r["memory_peak_bytes_last_step"], fmt_bytes),
        fmt_band(r["error_ratio"], _pct),
        status,
    ]
    return (
        f"<tr{cls}><td>{_swatch(color)}{esc(r['target'])}{mark}</td>"
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


def _summary_section(doc: dict, rows: list[dict], colors: dict) -> str:
    n = fixed_connections(doc)
    head = (
        f"<tr><th></th><th class=group colspan=5>at {n} connections (steady state)</th>"
        "<th class=group colspan=2>at peak</th><th class=group colspan=3>whole run (startup + warm-up)</th>"
        "<th colspan=5></th></tr>"
        "<tr><th>target</th><th>req/s</th><th>CPU µs / request</th><th>requests / CPU-second</th><th>× floor</th>"
        "<th>p99 ms</th><th>req/s</th><th>CPU µs / request</th><th>requests / CPU-second</th><th>× floor</th>"
        "<th>$ / billion requests</th><th>startup</th><th>warm-up</th><th>memory high-water (last step)</th>"
        "<th>error ratio</th><th>status</th></tr>"
    )
    body = "".join(_summary_row(r, colors[r["target"]]) for r in rows)
    return (
        f"<h2>Summary</h2><table>{head}{body}</table>"
        f"<p class=note>Median over {doc['profile']['repeats']} interleaved repeat(s), min–max in grey; "
        f"<b>⚠</b> marks a target whose CPU per request at {n} connections varies by more than "
        f"{SPREAD_LIMIT:.0%} ((max − min) / median) between repeats: its rank is not settled. "
        f"The figures at {n} connections are one closed-loop step after the warm-up: the efficiency to rank by "
        "(with the static upstream, where the service rather than Elasticsearch is the bottleneck). "
        "Peak = the step with the most successful requests per second. Requests per CPU-second and cost over "
        "the whole run count startup, warm-up and every step (the verify gate excluded); cost at "
        f"${doc['options']['price_per_vcpu_hour_usd']} per vCPU-hour. × floor = requests per CPU-second "
        "relative to the nginx proxy doing the same hop. Warm-up: seconds of windows until CPU per request "
        "settled (the median of the last 3 windows within 5 % of the 3 before; ⚑ cap: it never did); "
        "(fixed) = fixed warm-up steps, for targets without CPU figures. "
        "Memory is the cgroup's charge (v1 memory.max_usage_in_bytes / v2 memory.peak): "
        "it includes the page cache the target reads (jars, AOT cache), which the kernel reclaims at the limit; "
        "OOM kills are counted per step. The ceiling's figures are the upstream process's own (/proc), not a "
        "cgroup's.</p>"
    )


def _overload_section(doc: dict, rows: list[dict], colors: dict) -> str:
    n = overload_connections(doc)
    body = []
    for r in rows:
        o = r["overload"]
        oom = o["oom_kills"]
        oom_cell = fmt_band(oom, lambda v: "–" if v is None else f"{v:.0f}")
        if oom and oom["max"]:
            oom_cell = f"<span class=bad>{oom_cell}</span>"
        name = esc(r["target"]) + (" <span class=bad>(no yardstick here)</span>" if baseline_failed(r) else "")
        body.append(
            f"<tr><td>{_swatch(colors[r['target']])}{name}</td>"
            f"<td>{fmt_band(o['rps'], fmt_num)}</td><td>{fmt_band(o['error_ratio'], _pct)}</td>"
            f"<td>{fmt_band(o['socket_errors'], fmt_num)}</td><td>{fmt_band(o['p99_ms'], _ms)}</td>"
            f"<td>{fmt_band(o['memory_peak_bytes'], fmt_bytes)}</td>"
            f"<td>{fmt_band(r['memory_idle_working_set_bytes'], fmt_bytes)}</td>"
            f"<td>{fmt_band(o['memory_working_set_bytes'], fmt_bytes)}</td>"
            f"<td>{fmt_band(o['memory_per_connection_bytes'], _kib)}</td><td>{oom_cell}</td></tr>"
        )
    return (
        f"<h2>Overload ({n} connections)</h2><table><tr><th>target</th><th>successful req/s</th>"
        "<th>error ratio</th><th>socket errors</th><th>p99 ms</th><th>memory high-water</th>"
        "<th>working set after startup</th><th>working set after the step</th><th>per connection</th>"
        "<th>OOM kills</th></tr>" + "".join(body) + "</table>"
        f"<p class=note>The closed-loop step at the largest connection count ({n}): whether a target keeps "
        "answering, how its tail latency and memory grow, and whether the memory limit killed it. "
        f"A floor or ceiling with more than {BASELINE_ERRORS:.0%} errors here is marked: Elasticsearch rejects "
        "what the unbounded nginx passes on, while every service bounds its requests in flight to 64, so that "
        "baseline is no yardstick at this step, and the whole-run ratios to the floor are left out. Memory "
        "high-water is the cgroup's raw usage during that step (reset before it where the kernel allows), page "
        "cache included; the working set is usage less the inactive file cache, the figure Kubernetes reports "
        "and evicts by, after startup and just after the step; per connection is their difference over the "
        "connection count.</p>"
    )


def _framework_section(doc: dict, rows: list[dict], colors: dict) -> str:
    """Per service, the framework alone (GET /health, no upstream) beside the full lookup, at the fixed
    count: the difference is the Elasticsearch client's and the service's own work."""
    n = fixed_connections(doc)
    body = []
    for r in rows:
        alone, lookup = r["framework_only"]["cpu_us_per_request"], r["at_fixed"]["cpu_us_per_request"]
        if not alone:
            continue
        a, full = _median(alone), _median(lookup)
        rest = full - a if full is not None and a is not None else None
        body.append(
            f"<tr><td>{_swatch(colors[r['target']])}{esc(r['target'])}</td>"
            f"<td>{fmt_band(alone, lambda v: fmt_num(v, 1))}</td><td>{fmt_band(lookup, lambda v: fmt_num(v, 1))}</td>"
            f"<td>{fmt_num(rest, 1)}</td><td>{_pct(rest / full if rest is not None and full else None)}</td>"
            f"<td>{fmt_band(r['framework_only']['rps'], fmt_num)}</td></tr>"
        )
    if not body:
        return ""
    return (
        f"<h2>The framework's own cost ({n} connections)</h2><table><tr><th>service</th>"
        "<th>CPU µs/request, framework only (GET /health)</th><th>CPU µs/request, city lookup</th>"
        "<th>difference: Elasticsearch client and service code, µs</th><th>share of the lookup</th>"
        "<th>req/s, framework only</th></tr>"
        + "".join(body)
        + "</table><p class=note>The framework-only step runs after the measured steps, at the same "
        "connection count and length, on the spec's liveness route, which never calls Elasticsearch: the "
        "server, router, logging, metrics and JSON rendering of one small answer. The difference to the lookup "
        "is what the Elasticsearch client and the service's own code add (the region comes from the cache "
        "in both).</p>"
    )


def _warmup_section(groups: OrderedDict[str, list[dict]]) -> str:
    rows = []
    for name, runs in groups.items():
        for r in runs:
            w = r.get("warmup")
            if r["status"] != "ok" or not w:
                continue
            values = ", ".join("–" if v is None else f"{v:.1f}" for v in w["window_cpu_us_per_request"])
            if w["mode"] == "stable":
                rule = (
                    f"{w['connections']} connections, {w['window_s']:g} s windows, ±{w['tolerance']:.0%}, "
                    f"cap {w['cap_s']:g} s"
                )
                result = "stable" if w["converged"] else "<span class=capped>⚑ hit the cap</span>"
            else:
                rule = "fixed steps at " + ", ".join(map(str, w["connections"])) + " connections"
                result = esc(w.get("why", "fixed"))
            rows.append(
                f"<tr><td>{esc(name)}</td><td>{r['repeat'] + 1}</td><td>{esc(rule)}</td>"
                f"<td>{w['seconds']:.0f} s</td><td>{values}</td><td>{result}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h2>Warm-up</h2><table><tr><th>target</th><th>repeat</th><th>rule</th><th>seconds</th>"
        "<th>CPU µs / request per window</th><th>result</th></tr>" + "".join(rows) + "</table>"
        "<p class=note>Windows of load until the CPU per request of two consecutive windows agreed within "
        "the tolerance (relative to the earlier one), or until the cap. Targets without CPU figures of their "
        "own (ceiling, --url) get the profile's fixed warm-up steps.</p>"
    )


def _median_items(
    rows: list[dict], colors: dict, get: Callable[[dict], dict | None], scale: float = 1.0, skip: tuple[str, ...] = ()
) -> list[tuple[str, float | None, str]]:
    return [
        (r["target"], get(r)["median"] * scale if get(r) else None, colors[r["target"]])
        for r in rows
        if r["kind"] not in skip
    ]


def _efficiency_section(doc: dict, rows: list[dict], colors: dict) -> str:
    n = fixed_connections(doc)
    charts = [
        bar_chart(
            f"Requests per CPU-second at {n} connections relative to the floor",
            _median_items(rows, colors, lambda r: r["at_fixed"].get("ratio_to_floor")),
            "× floor",
            lambda v: f"{v:.2f}×",
            ref=1.0,
        ),
        bar_chart(
            f"CPU per request at {n} connections",
            _median_items(rows, colors, lambda r: r["at_fixed"]["cpu_us_per_request"]),
            "µs",
            lambda v: f"{v:.1f} µs",
        ),
        bar_chart(
            "Requests per CPU-second relative to the floor (whole run)",
            _median_items(rows, colors, lambda r: r.get("ratio_to_floor_band")),
            "× floor",
            lambda v: f"{v:.2f}×",
            ref=1.0,
        ),
        bar_chart(
            "Requests per CPU-second (whole run)",
            _median_items(rows, colors, lambda r: r["requests_per_cpu_s"]),
            "requests / CPU-second",
            fmt_num,
        ),
        bar_chart(
            "Startup: launch → first HTTP response",
            _median_items(rows, colors, lambda r: r["startup_s"], 1000, ("ceiling", "url")),
            "milliseconds",
            lambda v: f"{v:.0f} ms",
        ),
        bar_chart(
            "Cost per billion requests",
            _median_items(rows, colors, lambda r: r["cost_per_billion_usd"]),
            "USD",
            lambda v: f"${v:.2f}",
        ),
    ]
    return "<h2>Efficiency and startup</h2><div class=charts>" + "".join(charts) + "</div>"


def _ms_of(key: str) -> Callable[[dict], float | None]:
    return lambda s: s["latency_ms"][key]


STEP_CHARTS: list[tuple[str, Callable[[dict], float | None], str, bool]] = [
    ("Successful requests per second", lambda s: s["rps"], "req/s", False),
    ("Error ratio (non-2xx + socket errors)", lambda s: s["error_ratio"], "ratio", False),
    ("Latency p50", _ms_of("p50"), "ms (log)", True),
    ("Latency p90", _ms_of("p90"), "ms (log)", True),
    ("Latency p99", _ms_of("p99"), "ms (log)", True),
    ("Latency p99.9", _ms_of("p99_9"), "ms (log)", True),
    (
        "Memory high-water per step",
        lambda s: s["memory_peak_bytes"] / 2**20 if s["memory_peak_bytes"] else None,
        "MiB",
        False,
    ),
    ("Memory per req/s (high-water / req/s)", lambda s: s["memory_per_rps_kib"], "KiB per req/s", True),
    ("CPU per step (CPUs busy = CPU-s / s)", lambda s: s["cpu_utilisation"], "CPUs", False),
    (
        "CPU per request",
        lambda s: s["cpu_ms_per_request"] * 1000 if s["cpu_ms_per_request"] else None,
        "µs (log)",
        True,
    ),
    ("CPU throttled per step", lambda s: s["throttled_s"], "seconds", False),
]


def _steps_section(
    doc: dict,
    groups: OrderedDict[str, list[dict]],
    colors: dict,
    specs: Iterable[tuple[str, Callable[[dict], float | None], str, bool]] = STEP_CHARTS,
) -> str:
    conns = doc["profile"]["connections"]
    xl = [str(c) for c in conns]
    # The ceiling's memory is the unlimited upstream's RSS (Elasticsearch: JVM heap + mapped index
    # files): not comparable, and it would flatten every other line.
    charts = [
        line_chart(t, xl, _step_series(groups, colors, conns, g, ("ceiling",) if "emory" in t else ()), yl, log)
        for t, g, yl, log in specs
    ]
    cum = []
    for name, runs in groups.items():
        ok = [r for r in runs if r["status"] == "ok" and r.get("cumulative")]
        if ok:
            cum.append(
                {"name": name, "color": colors[name], "dash": ok[0]["kind"] != "bare", "points": ok[0]["cumulative"]}
            )
    charts.append(
        xy_chart("Cumulative requests vs CPU seconds (first repeat, from startup)", cum, "CPU seconds", "requests")
    )
    return (
        "<h2>Per step (closed loop, wrk)</h2><p class=note>Dashed: images, floor and ceiling. "
        "Shaded: min–max over repeats.</p><div class=charts>" + "".join(charts) + "</div>"
    )


def _open_loop_section(groups: OrderedDict[str, list[dict]]) -> str:
    rows = []
    for name, runs in groups.items():
        for r in runs:
            for s in r["steps"]:
                if s["kind"] != "open":
                    continue
                lat = s["latency_ms"]
                busy = fmt_num(s["cpu_utilisation"], 2) if s["cpu_utilisation"] is not None else "–"
                rows.append(
                    f"<tr><td>{esc(name)}</td><td>{r['repeat'] + 1}</td><td>{s['rate']}</td>"
                    f"<td>{fmt_num(s['rps'])}</td><td>{s['error_ratio']:.2%}</td>"
                    + "".join(f"<td>{lat[k]:.2f}</td>" for k in ("p50", "p90", "p99", "p99_9", "max"))
                    + f"<td>{busy}</td></tr>"
                )
    if not rows:
        return ""
    return (
        "<h2>Open loop (vegeta, fixed rate)</h2><table><tr><th>target</th><th>repeat</th><th>rate</th>"
        "<th>successful req/s</th><th>errors</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
        "<th>p99.9 ms</th><th>max ms</th><th>CPUs busy</th></tr>" + "".join(rows) + "</table>"
        "<p class=note>Successful req/s and CPUs busy are per second of the whole attack, which lasts until "
        "the last request is answered or times out (15 s): below the rate = the target fell behind. "
        "Requests are sent on a fixed schedule whether or not earlier ones have been "
        "answered, so a stall shows up in the latency of every request it delays (no coordinated "
        "omission), unlike wrk's closed loop above.</p>"
    )


def _placement_text(p: dict) -> str:
    text = (
        f"target CPUs {p['target'] or '-'}, load generator {p['load'] or '-'}, upstream {p['upstream'] or '-'} — "
        f"{p['note']}"
    )
    pin = p.get("upstream_pinning")
    if not pin:
        return text
    text += f"; upstream: {pin['how']}"
    if pin.get("previous"):
        restored = {True: ", restored", False: ", NOT restored"}.get(pin.get("restored"), "")
        before = ", ".join(f"pid {k}: CPUs {v}" for k, v in pin["previous"].items())
        text += f" (previous affinity {before}{restored})"
    if pin.get("errors"):
        text += "; errors: " + "; ".join(pin["errors"])
    return text


def _run_section(doc: dict) -> str:
    m = doc["machine"]
    kv = [
        (
            "machine",
            f"{m['cpu_model']}, {m['cpus']} CPUs, {fmt_bytes(m['memory_bytes'])}, {m['os']}, "
            f"kernel {m['kernel']}, {m['cgroup']}",
        ),
        ("load average at start", " ".join(f"{x:.2f}" for x in m["load_average_at_start"])),
        ("versions", ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)),
        ("git", m["git"]),
        ("limits", f"{doc['limits']['cpus']} CPUs, {fmt_bytes(doc['limits']['memory_bytes'])}, swap off"),
        ("placement", _placement_text(doc["placement"])),
        (
            "request",
            f"{doc['request']['path']}, mode {doc['request']['mode']} "
            f"({doc['request']['ids']} id(s); fixed id {doc['request']['fixed_id']})",
        ),
        ("profile", ", ".join(f"{k}={v}" for k, v in doc["profile"].items())),
        ("options", ", ".join(f"{k}={v}" for k, v in doc["options"].items())),
    ]
    return (
        "<h2>Run</h2><table class=kv>"
        + "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>" for k, v in kv)
        + "</table>"
    )


def death_text(death: dict) -> str:
    """A death's evidence in one line: exit code, the kernel's OOM verdict, where they were read."""
    return f"{death_words(death)} ({death.get('source', '?')})"


def _failures_section(doc: dict) -> str:
    fails = [r for r in doc["results"] if r["status"] != "ok"]
    if not fails:
        return ""
    unit = "block" if doc["profile"].get("blocks") else "repeat"
    items = []
    for r in fails:
        item = f"<li><b>{esc(r['target'])}</b> ({unit} {r['repeat'] + 1}): {esc(r['reason'])}"
        d = r.get("death")
        if d:
            tail = "\n".join(d.get("log_tail") or []) or "(empty log)"
            item += f"<br>{esc(death_text(d))}; the last lines of its log:<pre>{esc(tail)}</pre>"
        items.append(item + "</li>")
    return "<h2>Not benchmarked, failed or died</h2><ul>" + "".join(items) + "</ul>"


def _fig(f: dict | None, digits: int = 1) -> str:
    if not f or f.get("median") is None:
        return "–"
    ci = f.get("interval")
    return fmt_num(f["median"], digits) + (f" [{fmt_num(ci[0], digits)}–{fmt_num(ci[1], digits)}]" if ci else "")


def _ranking_section(doc: dict) -> str:
    """The block method's ranking: per step, ranks and ties, intervals, ratios, each start's rounds."""
    rk = doc.get("ranking")
    if not rk:
        return ""
    m = rk["method"]
    out = [
        "<h2>Ranking</h2>",
        f"<p class=note>{m['blocks']} starts (blocks) of every target × {m['rounds']} interleaved rounds; "
        f"figures: median of the starts' medians [95 % hierarchical bootstrap interval, {m['bootstrap']} "
        f"resamples, seed {m['seed']}]; neighbours share a rank (=) unless the interval of their per-round ratio "
        f"excludes 1. Steady state: {esc(m['settle'])}.</p>",
    ]
    aa = rk.get("aa")
    if aa:
        r = aa.get("ratio") or {}
        out.append(
            f"<p>A/A control {esc(aa['targets'][1])} / {esc(aa['targets'][0])}: per-round ratio {_fig(r, 3)}; "
            f"medians {fmt_num(aa['medians'][0], 1)} and {fmt_num(aa['medians'][1], 1)} µs.</p>"
        )
    for step, st in rk["steps"].items():
        out.append(
            f"<h3>{'closed loop' if step == 'closed' else 'fixed rate'}</h3><table><tr><th>rank</th><th>target</th>"
            "<th>CPU µs/request</th><th>× previous</th><th>× best</th><th>× floor</th><th>settled starts</th>"
            "<th>levels</th><th>each start's rounds (µs; dropped as warm-up before |)</th></tr>"
        )
        for row in st["rows"] + st["unranked"]:
            starts = st["starts"].get(row["target"], [])
            series = "; ".join(
                " ".join(("| " if s["kept_from"] == i and i else "") + fmt_num(v, 0) for i, v in enumerate(s["values"]))
                + ("" if s["settled"] else f" ({esc(s['why'])})")
                for s in starts
            )
            levels = ", ".join(f"{fmt_num(lv['level'], 1)} ({lv['starts']})" for lv in row.get("levels") or [])
            rank = f"{row['rank']}{' =' if row.get('tied') else ''}" if row.get("rank") else esc(row.get("why"))
            out.append(
                f"<tr><td>{rank}</td><td>{esc(row['target'])}</td><td>{_fig(row)}</td>"
                f"<td>{_fig(row.get('vs_previous'), 3)}</td><td>{_fig(row.get('vs_best'), 3)}</td>"
                f"<td>{_fig(row.get('vs_floor'), 2)}</td><td>{row.get('settled', 0)}/{row.get('starts', 0)}</td>"
                f"<td>{levels or '–'}</td><td>{series}</td></tr>"
            )
        out.append("</table>")
    return "".join(out)


def html(doc: dict) -> str:
    groups = _by_target(doc)
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(groups)}
    rows = summary(doc)
    up = doc["upstream"]
    return "".join(
        [
            f"<!doctype html><html><head><meta charset=utf-8><title>cityref benchmark {esc(doc['run_id'])}</title>"
            f"<style>{CSS}</style></head><body>",
            f"<h1>cityref benchmark — {esc(doc['run_id'])}</h1>",
            f"<p class=note>Profile <b>{esc(doc['profile']['name'])}</b>, upstream <b>{esc(up['kind'])}</b> — "
            f"{esc(up['description'])}. Wall time {fmt_num(doc.get('wall_s'))} s.</p>",
            _ranking_section(doc),
            _summary_section(doc, rows, colors),
            _overload_section(doc, rows, colors),
            _framework_section(doc, rows, colors),
            _efficiency_section(doc, rows, colors),
            _warmup_section(groups),
            _steps_section(doc, groups, colors),
            _open_loop_section(groups),
            _run_section(doc),
            _failures_section(doc),
            "</body></html>\n",
        ]
    )
