"""`python -m bench compare RUN_A RUN_B`: per target, how the headline figures moved from run A to
run B, with changes smaller than the runs' own spread marked as noise.

A figure's spread is the width of its band over a run's repeats, relative to its median
(bench.metrics.band). A change counts only when it is larger than the wider of the two spreads; with
a single repeat on either side the spread is unknown, and the change is marked as such.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import report

# (key, label, unit, where in a summary row, lower is better)
FIGURES = [
    ("cpu_us_per_request", "CPU µs/request @fixed", "µs", ("at_fixed", "cpu_us_per_request"), True),
    ("peak_rps", "peak requests/s", "req/s", ("peak_rps",), False),
    ("requests_per_cpu_s", "requests per CPU-second (whole run)", "req/CPU-s", ("requests_per_cpu_s",), False),
    ("memory_peak_bytes", "memory high-water (last step)", "bytes", ("memory_peak_bytes_last_step",), True),
    ("startup_s", "startup (launch → first response)", "s", ("startup_s",), True),
]


def load(path: str | Path) -> dict:
    """A run file, given as the file or as its run directory."""
    p = Path(path)
    if p.is_dir():
        p = p / "run.json"
    doc = json.loads(p.read_text())
    doc.setdefault("summary", report.summary(doc))
    doc["_path"] = str(p)
    return doc


def _band(row: dict, where: tuple[str, ...]) -> dict | None:
    value = row
    for key in where:
        value = (value or {}).get(key)
    return value


def verdict(a: dict | None, b: dict | None, lower_is_better: bool) -> dict:
    """The change from band a to band b: relative change, the noise threshold and what it means."""
    if not a or not b or a.get("median") in (None, 0) or b.get("median") is None:
        return {"change": None, "threshold": None, "verdict": "missing"}
    change = b["median"] / a["median"] - 1
    if a["n"] < 2 or b["n"] < 2:
        return {"change": change, "threshold": None, "verdict": "spread unknown"}
    threshold = max(a["spread"] or 0.0, b["spread"] or 0.0)
    if abs(change) <= threshold:
        return {"change": change, "threshold": threshold, "verdict": "noise"}
    better = (change < 0) == lower_is_better
    return {"change": change, "threshold": threshold, "verdict": "better" if better else "worse"}


def compare(run_a: dict, run_b: dict) -> list[dict]:
    """One row per target present in both runs (in run B's order), one entry per figure."""
    rows_a = {r["target"]: r for r in run_a["summary"]}
    out = []
    for row_b in run_b["summary"]:
        row_a = rows_a.get(row_b["target"])
        if row_a is None:
            continue
        figures = {}
        for key, _label, _unit, where, lower in FIGURES:
            a, b = _band(row_a, where), _band(row_b, where)
            figures[key] = {"a": a, "b": b, **verdict(a, b, lower)}
        out.append({"target": row_b["target"], "figures": figures})
    return out


def _value(band: dict | None, unit: str) -> str:
    if not band or band.get("median") is None:
        return "–"
    m = band["median"]
    if unit == "bytes":
        return report.fmt_bytes(m)
    if unit == "s":
        return f"{m * 1000:.0f} ms"
    return report.fmt_num(m, 1 if m < 100 else 0)


def _change(f: dict) -> str:
    if f["change"] is None:
        return "–"
    text = f"{f['change']:+.1%}"
    if f["verdict"] == "noise":
        return f"{text} (noise, spread {f['threshold']:.1%})"
    if f["verdict"] == "spread unknown":
        return f"{text} (1 repeat: spread unknown)"
    return f"{text} {f['verdict']}"


def text(run_a: dict, run_b: dict, rows: list[dict]) -> str:
    lines = [f"A: {run_a['_path']}", f"B: {run_b['_path']}", ""]
    for row in rows:
        lines.append(row["target"])
        for key, label, unit, _where, _lower in FIGURES:
            f = row["figures"][key]
            lines.append(f"  {label:38} {_value(f['a'], unit):>12} → {_value(f['b'], unit):>12}  {_change(f)}")
    missing = sorted({r["target"] for r in run_a["summary"]} ^ {r["target"] for r in run_b["summary"]})
    if missing:
        lines.append(f"\nin one run only: {', '.join(missing)}")
    return "\n".join(lines)


def html(run_a: dict, run_b: dict, rows: list[dict]) -> str:
    colors = {"better": "#1a7f37", "worse": "#cf222e", "noise": "#6e7781", "spread unknown": "#9a6700"}
    head = "".join(f"<th>{report.esc(label)}</th>" for _k, label, _u, _w, _l in FIGURES)
    body = []
    for row in rows:
        cells = []
        for key, _label, unit, _where, _lower in FIGURES:
            f = row["figures"][key]
            color = colors.get(f["verdict"], "inherit")
            cells.append(
                f"<td>{report.esc(_value(f['a'], unit))} → {report.esc(_value(f['b'], unit))}<br>"
                f'<span style="color:{color}">{report.esc(_change(f))}</span></td>'
            )
        body.append(f"<tr><th>{report.esc(row['target'])}</th>{''.join(cells)}</tr>")
    return (
        "<!doctype html><meta charset=utf-8><title>cityref benchmark comparison</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #d0d7de;padding:.4em .6em;text-align:right;vertical-align:top}"
        "tr>th:first-child{text-align:left}</style>"
        f"<h1>Benchmark comparison</h1><p>A: {report.esc(run_a['_path'])}<br>B: {report.esc(run_b['_path'])}</p>"
        "<p>Medians over each run's repeats, A → B. A change no larger than the wider of the two runs' "
        "spreads (max − min over median) is noise.</p>"
        f"<table><tr><th>target</th>{head}</tr>{''.join(body)}</table>"
    )
