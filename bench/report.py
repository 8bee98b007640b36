"""The run's summary (also stored in the JSON) and the self-contained HTML report with inline SVG charts."""
from __future__ import annotations

import html as _html
import math
from collections import OrderedDict
from typing import Callable, Iterable

from .metrics import band, ratio

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39"]
SUMMARY_KEYS = ["peak_rps", "cpu_us_per_request_at_peak", "requests_per_cpu_s", "cost_per_billion_usd",
                "memory_peak_bytes_last_step", "error_ratio"]


def _by_target(doc: dict) -> "OrderedDict[str, list[dict]]":
    groups: OrderedDict[str, list[dict]] = OrderedDict()
    for t in doc.get("targets", []):
        groups[t["name"]] = []
    for r in doc["results"]:
        groups.setdefault(r["target"], []).append(r)
    return groups


def summary(doc: dict) -> list[dict]:
    """Per target: median and min-max over the repeats of the headline figures, and the ratio of
    requests per CPU-second to the floor's (median to median)."""
    rows = []
    for name, runs in _by_target(doc).items():
        ok = [r for r in runs if r["status"] == "ok" and r.get("totals")]
        row: dict = {"target": name, "kind": runs[0]["kind"] if runs else None, "runs": len(runs), "ok": len(ok),
                     "failures": [r["reason"] for r in runs if r["status"] != "ok"]}
        for key in SUMMARY_KEYS:
            row[key] = band([r["totals"][key] for r in ok])
        row["startup_s"] = band([r["startup_s"] for r in ok])
        rows.append(row)
    floor = next((r for r in rows if r["kind"] == "floor" and r["requests_per_cpu_s"]), None)
    for row in rows:
        med = row["requests_per_cpu_s"]["median"] if row["requests_per_cpu_s"] else None
        row["ratio_to_floor"] = ratio(med, floor["requests_per_cpu_s"]["median"]) if floor else None
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
    return (f'<figure><svg viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{esc(title)}">'
            f'<text x="{W / 2}" y="18" class="t">{esc(title)}</text>{body}</svg>{legend}</figure>')


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
        out.append(f'<line x1="{ML}" y1="{y(t):.1f}" x2="{ML + pw}" y2="{y(t):.1f}" class="grid"/>'
                   f'<text x="{ML - 6}" y="{y(t) + 4:.1f}" class="yl">{short(t)}</text>')
    for i, lab in enumerate(xlabels):
        out.append(f'<text x="{x(i):.1f}" y="{MT + ph + 16}" class="xl">{esc(lab)}</text>')
    out.append(f'<text x="14" y="{MT + ph / 2}" class="yt" transform="rotate(-90 14 {MT + ph / 2})">{esc(ylabel)}</text>')
    for s in series:
        if s.get("lo") and s.get("hi"):
            pts = [(x(i), y(h)) for i, h in enumerate(s["hi"]) if h is not None]
            pts += [(x(i), y(lv)) for i, lv in reversed(list(enumerate(s["lo"]))) if lv is not None]
            if pts:
                out.append(f'<polygon points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}" '
                           f'fill="{s["color"]}" opacity="0.15"/>')
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


def bar_chart(title: str, items: list[tuple[str, float | None, str]], unit: str,
              fmt: Callable[[float], str] = lambda v: f"{v:.3g}", ref: float | None = None) -> str:
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
        out.append(f'<rect x="{label_w}" y="{yy + 3}" width="{bw:.1f}" height="15" fill="{c}"/>'
                   f'<text x="{label_w + bw + 4:.1f}" y="{yy + 15}" class="bl">{esc(fmt(v))}</text>')
    if ref is not None:
        xr = label_w + ref / top * pw
        out.append(f'<line x1="{xr:.1f}" y1="{MT - 4}" x2="{xr:.1f}" y2="{h - 26}" class="ref"/>')
    out.append(f'<text x="{label_w + pw / 2}" y="{h - 8}" class="xl">{esc(unit)}</text>')
    return (f'<figure><svg viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{esc(title)}">'
            f'<text x="{W / 2}" y="18" class="t">{esc(title)}</text>{"".join(out)}</svg></figure>')


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
        out.append(f'<line x1="{ML}" y1="{y(ty):.1f}" x2="{ML + pw}" y2="{y(ty):.1f}" class="grid"/>'
                   f'<text x="{ML - 6}" y="{y(ty) + 4:.1f}" class="yl">{short(ty)}</text>'
                   f'<text x="{x(tv):.1f}" y="{MT + ph + 16}" class="xl">{short(tv)}</text>')
    for s in series:
        if s["points"]:
            dash = ' stroke-dasharray="6 3"' if s.get("dash") else ""
            out.append(f'<polyline points="{" ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in s["points"])}" '
                       f'fill="none" stroke="{s["color"]}" stroke-width="2"{dash}/>')
    out.append(f'<text x="{ML + pw / 2}" y="{H - 6}" class="xl">{esc(xlabel)}</text>'
               f'<text x="14" y="{MT + ph / 2}" class="yt" transform="rotate(-90 14 {MT + ph / 2})">{esc(ylabel)}</text>')
    return _frame(title, "".join(out), _legend(series))


# ---------------------------------------------------------------- page

def _step_series(groups: "OrderedDict[str, list[dict]]", colors: dict, conns: list[int],
                 get: Callable[[dict], float | None], skip: tuple[str, ...] = ()) -> list[dict]:
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


CSS = """
body{font:14px/1.4 system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:24px;color:#222;max-width:1340px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}td{white-space:nowrap}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.band{color:#888;font-size:11px}
.kv td{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0;border:1px solid #eee;padding:4px}
svg text{font-family:inherit}.t{font-size:13px;font-weight:600;text-anchor:middle}.xl{font-size:10px;text-anchor:middle;fill:#555}
.yl{font-size:10px;text-anchor:end;fill:#555}.yt{font-size:10px;text-anchor:middle;fill:#555}.bl{font-size:10px;fill:#333}
.ax{stroke:#888}.grid{stroke:#eee}.ref{stroke:#000;stroke-dasharray:4 3}
.legend{font-size:11px;max-width:630px}.legend span{margin-right:10px;white-space:nowrap}
.legend i{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:middle}
.fail{color:#b00}.note{color:#555;font-size:12px;max-width:1000px}
"""


def html(doc: dict) -> str:
    groups = _by_target(doc)
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(groups)}
    rows = summary(doc)
    conns = doc["profile"]["connections"]
    xl = [str(c) for c in conns]
    m, up = doc["machine"], doc["upstream"]

    def charts(specs: Iterable[tuple[str, Callable[[dict], float | None], str, bool]]) -> str:
        # The ceiling's memory is the unlimited upstream's RSS (Elasticsearch: JVM heap + mapped
        # index files): not comparable, and it would flatten every other line.
        return "".join(line_chart(t, xl, _step_series(groups, colors, conns, g,
                                                      ("ceiling",) if "emory" in t else ()), yl, log)
                       for t, g, yl, log in specs)

    def ms(key: str) -> Callable[[dict], float | None]:
        return lambda s: s["latency_ms"][key]

    parts = [f"<!doctype html><html><head><meta charset=utf-8><title>cityref benchmark {esc(doc['run_id'])}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>cityref benchmark — {esc(doc['run_id'])}</h1>",
             f"<p class=note>Profile <b>{esc(doc['profile']['name'])}</b>, upstream <b>{esc(up['kind'])}</b> — "
             f"{esc(up['description'])}. Wall time {fmt_num(doc.get('wall_s'))} s.</p>"]
    # summary table
    head = ("<tr><th>target</th><th>peak req/s</th><th>CPU µs / request (at peak)</th><th>requests / CPU-second</th>"
            "<th>× floor</th><th>$ / billion requests</th><th>startup</th><th>memory high-water (last step)</th>"
            "<th>error ratio</th><th>status</th></tr>")
    body = []
    for r in rows:
        status = "ok" if r["ok"] == r["runs"] else f'<span class=fail>{esc("; ".join(r["failures"]))}</span>'
        body.append(
            f'<tr><td><i style="display:inline-block;width:10px;height:10px;background:{colors[r["target"]]}"></i> '
            f'{esc(r["target"])}</td>'
            f'<td>{fmt_band(r["peak_rps"], fmt_num)}</td>'
            f'<td>{fmt_band(r["cpu_us_per_request_at_peak"], lambda v: fmt_num(v, 1))}</td>'
            f'<td>{fmt_band(r["requests_per_cpu_s"], fmt_num)}</td>'
            f'<td>{fmt_num(r["ratio_to_floor"], 2)}</td>'
            f'<td>{fmt_band(r["cost_per_billion_usd"], lambda v: fmt_num(v, 2))}</td>'
            f'<td>{fmt_band(r["startup_s"], lambda v: "–" if v is None else f"{v * 1000:.0f} ms")}</td>'
            f'<td>{fmt_band(r["memory_peak_bytes_last_step"], fmt_bytes)}</td>'
            f'<td>{fmt_band(r["error_ratio"], lambda v: "–" if v is None else f"{v:.2%}")}</td>'
            f"<td>{status}</td></tr>")
    parts.append(f"<h2>Summary</h2><table>{head}{''.join(body)}</table>"
                 f"<p class=note>Median over {doc['profile']['repeats']} interleaved repeat(s), min–max in grey. "
                 "Peak req/s = best successful requests per second of the closed-loop steps. Requests per CPU-second "
                 "and cost count the whole run: startup, warm-up and every step (the verify gate excluded); cost at "
                 f"${doc['options']['price_per_vcpu_hour_usd']} per vCPU-hour. × floor = requests per CPU-second "
                 "relative to the nginx proxy doing the same hop. Memory is the cgroup's charge (v1 "
                 "memory.max_usage_in_bytes / v2 memory.peak): it includes the page cache the target reads "
                 "(jars, AOT cache), which the kernel reclaims at the limit; OOM kills are counted per step. "
                 "The ceiling's figures are the upstream process's own (/proc), not a cgroup's.</p>")
    # efficiency & startup bars
    parts.append("<h2>Efficiency and startup</h2><div class=charts>")
    parts.append(bar_chart("Requests per CPU-second relative to the floor (nginx proxy)",
                           [(r["target"], r["ratio_to_floor"], colors[r["target"]]) for r in rows], "× floor",
                           lambda v: f"{v:.2f}×", ref=1.0))
    parts.append(bar_chart("Requests per CPU-second (whole run)",
                           [(r["target"], r["requests_per_cpu_s"]["median"] if r["requests_per_cpu_s"] else None,
                             colors[r["target"]]) for r in rows], "requests / CPU-second", fmt_num))
    parts.append(bar_chart("Startup: launch → first HTTP response",
                           [(r["target"], r["startup_s"]["median"] * 1000 if r["startup_s"] else None, colors[r["target"]])
                            for r in rows if r["kind"] not in ("ceiling", "url")], "milliseconds",
                           lambda v: f"{v:.0f} ms"))
    parts.append(bar_chart("Cost per billion requests",
                           [(r["target"], r["cost_per_billion_usd"]["median"] if r["cost_per_billion_usd"] else None,
                             colors[r["target"]]) for r in rows], "USD", lambda v: f"${v:.2f}"))
    parts.append("</div>")
    parts.append("<h2>Per step (closed loop, wrk)</h2><p class=note>Dashed: images, floor and ceiling. "
                 "Shaded: min–max over repeats.</p><div class=charts>")
    parts.append(charts([
        ("Successful requests per second", lambda s: s["rps"], "req/s", False),
        ("Error ratio (non-2xx + socket errors)", lambda s: s["error_ratio"], "ratio", False),
        ("Latency p50", ms("p50"), "ms (log)", True),
        ("Latency p90", ms("p90"), "ms (log)", True),
        ("Latency p99", ms("p99"), "ms (log)", True),
        ("Latency p99.9", ms("p99_9"), "ms (log)", True),
        ("Memory high-water per step", lambda s: s["memory_peak_bytes"] / 2**20 if s["memory_peak_bytes"] else None,
         "MiB", False),
        ("Memory per req/s (high-water / req/s)", lambda s: s["memory_per_rps_kib"], "KiB per req/s", True),
        ("CPU per step (CPUs busy = CPU-s / s)", lambda s: s["cpu_utilisation"], "CPUs", False),
        ("CPU per request", lambda s: s["cpu_ms_per_request"] * 1000 if s["cpu_ms_per_request"] else None,
         "µs (log)", True),
        ("CPU throttled per step", lambda s: s["throttled_s"], "seconds", False),
    ]))
    cum = []
    for name, runs in groups.items():
        ok = [r for r in runs if r["status"] == "ok" and r.get("cumulative")]
        if ok:
            cum.append({"name": name, "color": colors[name], "dash": ok[0]["kind"] != "bare",
                        "points": ok[0]["cumulative"]})
    parts.append(xy_chart("Cumulative requests vs CPU seconds (first repeat, from startup)", cum, "CPU seconds",
                          "requests"))
    parts.append("</div>")
    # open loop
    open_rows = []
    for name, runs in groups.items():
        for r in runs:
            for s in r["steps"]:
                if s["kind"] == "open":
                    lat = s["latency_ms"]
                    open_rows.append(
                        f"<tr><td>{esc(name)}</td><td>{r['repeat'] + 1}</td><td>{s['rate']}</td>"
                        f"<td>{fmt_num(s['rps'])}</td><td>{s['error_ratio']:.2%}</td>"
                        + "".join(f"<td>{lat[k]:.2f}</td>" for k in ("p50", "p90", "p99", "p99_9", "max"))
                        + f"<td>{fmt_num(s['cpu_utilisation'], 2) if s['cpu_utilisation'] is not None else '–'}</td></tr>")
    if open_rows:
        parts.append("<h2>Open loop (vegeta, fixed rate)</h2><table><tr><th>target</th><th>repeat</th><th>rate</th>"
                     "<th>successful req/s</th><th>errors</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
                     "<th>p99.9 ms</th><th>max ms</th><th>CPUs busy</th></tr>" + "".join(open_rows) + "</table>"
                     "<p class=note>Successful req/s and CPUs busy are per second of the whole attack, which lasts until "
                     "the last request is answered or times out (15 s): below the rate = the target fell behind. "
                     "Requests are sent on a fixed schedule whether or not earlier ones have been "
                     "answered, so a stall shows up in the latency of every request it delays (no coordinated "
                     "omission), unlike wrk's closed loop above.</p>")
    # machine
    kv = [("machine", f"{m['cpu_model']}, {m['cpus']} CPUs, {fmt_bytes(m['memory_bytes'])}, {m['os']}, "
                      f"kernel {m['kernel']}, {m['cgroup']}"),
          ("load average at start", " ".join(f"{x:.2f}" for x in m["load_average_at_start"])),
          ("versions", ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)),
          ("git", m["git"]),
          ("limits", f"{doc['limits']['cpus']} CPUs, {fmt_bytes(doc['limits']['memory_bytes'])}, swap off"),
          ("placement", f"target CPUs {doc['placement']['target'] or '-'}, load generator "
                        f"{doc['placement']['load'] or '-'}, upstream {doc['placement']['upstream'] or '-'} — "
                        f"{doc['placement']['note']}"),
          ("request", f"{doc['request']['path']}, mode {doc['request']['mode']} "
                      f"({doc['request']['ids']} id(s); fixed id {doc['request']['fixed_id']})"),
          ("profile", ", ".join(f"{k}={v}" for k, v in doc["profile"].items())),
          ("options", ", ".join(f"{k}={v}" for k, v in doc["options"].items()))]
    parts.append("<h2>Run</h2><table class=kv>" + "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>"
                                                          for k, v in kv) + "</table>")
    fails = [r for r in doc["results"] if r["status"] != "ok"]
    if fails:
        parts.append("<h2>Not benchmarked</h2><ul>" + "".join(
            f"<li><b>{esc(r['target'])}</b> (repeat {r['repeat'] + 1}): {esc(r['reason'])}</li>" for r in fails) + "</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)
