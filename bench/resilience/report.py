"""The resilience run's HTML report, text summary and Markdown tables, from its run.json alone (like
bench/report.py); the plain words are findings.py's, which the run keeps in each record too."""

from __future__ import annotations

import re

from ..report import CSS, _run_section, esc, fmt_bytes, fmt_num
from ..targets import death_words, oom_verdict
from . import findings


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f} ms" if v < 1000 else f"{v / 1000:.2f} s"


def _sec(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f} s"


def _status(a: dict) -> str:
    parts = [f"{k} × {v}" for k, v in a["by_status"].items()]
    if a["socket_errors"]:
        detail = "; ".join(f"{k} × {v}" for k, v in a["socket_errors_detail"].items())
        parts.append(f'<span class=bad title="{esc(detail)}">socket errors × {a["socket_errors"]}</span>')
    return ", ".join(parts) or "–"


def _res(r: dict | None, key: str) -> str:
    if not r or r.get(key) is None:
        return "–"
    return fmt_bytes(r[key]) if key.endswith("bytes") else fmt_num(r[key])


def _fault_rows(recs: list[dict], pick) -> str:
    rows = []
    for r in recs:
        for f in pick(r):
            res = f["resources"]
            alive = "yes" if f.get("alive") else "<span class=bad>no</span>"
            recovery = (
                _sec(f["recovery_s"])
                if f["recovery_s"] is not None
                else f"<span class=bad>not within {_sec(f['observed_after_s'])}</span>"
            )
            ws, fds, th = (
                " / ".join(_res(res[k], key) for k in ("before", "during_max", "after"))
                for key in ("working_set_bytes", "fds", "threads")
            )
            rows.append(
                f"<tr><td>{esc(r['target'])}</td><td>{f['connections']}</td><td>{_status(f['before'])}</td>"
                f"<td>{_status(f['in_flight']) if 'in_flight' in f else '–'}</td>"
                f"<td>{_status(f.get('during_answered') or f['during'])}</td>"
                f"<td>{_status(f['during_answered_after']) if 'during_answered_after' in f else '–'}</td>"
                f"<td>{_ms(f['during']['p99_ms'])}</td>"
                f"<td>{_ms(f['during']['max_ms'])}</td>"
                f"<td>{recovery}</td><td>{ws}</td><td>{fds}</td><td>{th}</td><td>{alive}</td></tr>"
            )
    return "".join(rows)


FAULT_HEAD = (
    "<tr><th>target</th><th>connections</th><th>answers before</th><th>in flight when it began</th>"
    "<th>answered during</th><th>sent during, answered after</th><th>p99 of those sent during</th>"
    "<th>max during</th><th>recovery</th><th>working set before / during (max) / after</th>"
    "<th>fds</th><th>threads</th><th>survived</th></tr>"
)


def _clients(recs: list[dict]) -> str:
    rows = []
    for r in recs:
        c = r.get("clients")
        if not c:
            continue
        n, s = c["normal_load"], c["slow_clients"]

        def load_cell(x: dict) -> str:
            return f"{fmt_num(x['rps'])} req/s, p99 {_ms(x['p99_ms'])}" + (
                f", <span class=bad>{x['errors']} errors</span>" if x["errors"] else ""
            )

        modes = s.get("by_mode") or {"": s}
        held = "<br>".join(
            (f"{esc(m)}: " if m else "")
            + (f"{_sec(x['held_s_median'])} (max {_sec(x['held_s_max'])})" if x["closed_by_server"] else "–")
            + (
                f", <b>{x['still_open_at_end']} still open after {s['watched_s']:g} s</b>"
                if x["still_open_at_end"]
                else ""
            )
            for m, x in modes.items()
        )
        closed_with = "<br>".join(
            (f"{esc(m)}: " if m else "") + (", ".join(f"{k} × {v}" for k, v in x["closed_with"].items()) or "–")
            for m, x in modes.items()
        )
        senders = "<br>".join(
            f"{esc(h['kind'])}: {esc(h['outcome'])}"
            + (f" after {fmt_bytes(h['bytes_sent'])}" if h["outcome"] != "read all" else "")
            + (f", answered {esc(h['status'])}" if h["status"] else "")
            for h in c["hostile"]["senders"]
        )
        hr = c["hostile"]["resources_max"]
        rows.append(
            f"<tr><td>{esc(r['target'])}</td><td>{load_cell(n['alone'])}<br>"
            f"{load_cell(n['alone_after']) if n.get('alone_after') else ''}</td>"
            f"<td>{load_cell(n['with_slow_clients'])}</td>"
            f"<td>{s['connections'] - s['refused']} of {s['connections']}</td><td style='text-align:left'>{held}</td>"
            f"<td style='text-align:left'>{closed_with}</td>"
            f"<td>{_res(s['resources_max'], 'working_set_bytes')}, {_res(s['resources_max'], 'fds')} fds</td>"
            f"<td>{load_cell(n['with_hostile_senders'])}</td><td style='text-align:left'>{senders}</td>"
            f"<td>{_res(hr, 'working_set_bytes')} (usage peak {_res(hr, 'usage_peak_bytes')})</td>"
            f"<td>{'yes' if c['alive'] else '<span class=bad>no</span>'}</td></tr>"
        )
    return (
        "<table><tr><th>target</th><th>normal load alone, before and after</th><th>with slow clients</th>"
        "<th>slow clients accepted</th>"
        "<th>held (header timeout)</th><th>slow clients closed with</th><th>working set max, fds</th>"
        "<th>with hostile senders</th><th>hostile senders</th><th>working set max (hostile)</th><th>survived</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _soak(recs: list[dict]) -> str:
    rows = []
    for r in recs:
        s = r.get("soak")
        if not s:
            continue
        a, b, d = s["slices"][0], s["slices"][-1], s["drift"]
        rows.append(
            f"<tr><td>{esc(r['target'])}</td><td>{fmt_num(a['rps'])} → {fmt_num(b['rps'])}</td>"
            f"<td>{_ms(a['p99_ms'])} → {_ms(b['p99_ms'])}</td><td>{a['errors']} → {b['errors']}</td>"
            f"<td>{_res(a, 'working_set_bytes')} → {_res(b, 'working_set_bytes')} "
            f"({'+' if (d['working_set_bytes'] or 0) >= 0 else ''}{_res(d, 'working_set_bytes')})</td>"
            f"<td>{_res(a, 'fds')} → {_res(b, 'fds')}</td><td>{_res(a, 'threads')} → {_res(b, 'threads')}</td>"
            f"<td>{'yes' if s['alive'] else '<span class=bad>no</span>'}</td></tr>"
        )
    return (
        "<table><tr><th>target</th><th>req/s first → last slice</th><th>p99</th><th>errors per slice</th>"
        "<th>working set at the slice's end (drift)</th><th>fds</th><th>threads</th><th>survived</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _slow_upstream(r: dict) -> list[dict]:
    return [r["slow_upstream"]] if r.get("slow_upstream") else []


def _deaths(recs: list[dict]) -> list[tuple[dict, dict, dict]]:
    """(record, death, evidence) of every death that kept its evidence (older run files have none)."""
    return [(r, d, d["evidence"]) for r in recs for d in r.get("died", []) if d.get("evidence")]


def _evidence_text(ev: dict) -> str:
    """Where the verdict comes from, and the cgroup's counter where it was read."""
    kills = ev.get("oom_kills")
    return ev.get("source", "?") + ("" if kills is None else f", OOM kills in its cgroup: {kills}")


def _deaths_html(recs: list[dict]) -> str:
    items = []
    for r, d, ev in _deaths(recs):
        tail = "\n".join(ev.get("log_tail") or []) or "(empty log)"
        items.append(
            f"<li><b>{esc(r['target'])}</b> died in {esc(d['scenario'])} ({esc(d['phase'])}): "
            f"{esc(death_words(ev))} ({esc(_evidence_text(ev))}); the last lines of its log:"
            f"<pre>{esc(tail)}</pre></li>"
        )
    return "<h2>Deaths</h2><ul>" + "".join(items) + "</ul>" if items else ""


def html(doc: dict) -> str:
    recs = [r for r in doc["resilience"] if r["status"] == "ok"]
    p = doc["profile"]
    failed = [r for r in doc["resilience"] if r["status"] != "ok"]
    # recomputed from the figures, so that a run file gets the current wording
    words = "".join(f"<li><b>{esc(r['target'])}</b>: {esc(findings.words(r))}</li>" for r in recs)
    return "".join(
        [
            f"<!doctype html><html><head><meta charset=utf-8><title>cityref resilience {esc(doc['run_id'])}</title>"
            f"<style>{CSS}</style></head><body>",
            f"<h1>cityref resilience — {esc(doc['run_id'])}</h1>",
            f"<p class=note>Profile <b>{esc(p['name'])}</b>. Every target under {doc['limits']['cpus']} CPUs and "
            f"{fmt_bytes(doc['limits']['memory_bytes'])}; ELASTICSEARCH_TIMEOUT_MS {doc['upstream']['timeout_ms']} "
            f"(the default). Wall time {fmt_num(doc.get('wall_s'))} s. Working set = cgroup usage minus inactive "
            "file cache.</p>",
            f"<h2>In plain words</h2><ul>{words}</ul>",
            _deaths_html(doc["resilience"]),
            f"<h2>Upstream outage under load</h2><p class=note>The faulting proxy between the target and "
            f"Elasticsearch refuses every connection for {p['fault_s']:g} s after {p['before_s']:g} s of load, then "
            f"serves again for {p['after_s']:g} s. Load: a closed loop of vegeta workers. Answers by status of the "
            "requests sent in each window, socket errors apart; recovery = from the upstream's return to the end of "
            "the last 0.1 s bin (by completion) in which fewer than 99 % of the answers are 200s. The contract "
            "expects only 503s.</p>"
            f"<table>{FAULT_HEAD}{_fault_rows(recs, lambda r: r.get('outage') or [])}</table>",
            f"<h2>Slow upstream</h2><p class=note>The proxy holds every Elasticsearch request for twice "
            f"ELASTICSEARCH_TIMEOUT_MS for {p['fault_s']:g} s, at {p['load_connections']} connections. The contract "
            "expects only 504s, each within the timeout plus the service's own time.</p>"
            f"<table>{FAULT_HEAD}{_fault_rows(recs, _slow_upstream)}</table>",
            f"<h2>Slow and hostile clients</h2><p class=note>Beside a closed loop of {p['load_connections']} "
            f"connections ({p['slow_load_s']:g} s per measurement): {p['slow_clients']} connections that send a "
            f"request line, then one header byte every {p['slow_interval_s']:g} s, watched for "
            f"{p['slow_hold_cap_s']:g} s; then three senders of {fmt_bytes(p['hostile_bytes'])} each (a method "
            "token without a space, one header line, a GET body with its Content-Length), as fast as the server "
            "reads. Bytes are what the sender wrote before the cut (its socket buffer is 64 KiB; the server's "
            "receive buffer holds some more).</p>" + _clients(recs),
            f"<h2>Soak</h2><p class=note>{p['soak_connections']} connections, {p['soak_minutes']} slices of "
            f"{p['soak_slice_s']:g} s (wrk), first slice against the last.</p>" + _soak(recs),
            _run_section(doc),
            (
                "<h2>Not run</h2><ul>"
                + "".join(f"<li><b>{esc(r['target'])}</b>: {esc(r['reason'])}</li>" for r in failed)
                + "</ul>"
                if failed
                else ""
            ),
            "</body></html>\n",
        ]
    )


def text(doc: dict) -> str:
    lines = []
    for r in doc["resilience"]:
        ok = r["status"] == "ok"
        lines.append(f"{r['target']}: " + (findings.words(r) if ok else f"{r['status']} — {r['reason']}"))
    return "\n".join(lines)


def _md_during(f: dict) -> str:
    """Answered during the fault (the contract's status), then the p99 of all sent during it, and how
    many waited past its end (answered after it)."""
    a = f.get("during_answered") or f["during"]
    late = f.get("during_answered_after")
    text = f"{_md_status(a)} ({_ms(f['during']['p99_ms'])})"
    return text + (f"; {late['requests']} answered after it" if late and late["requests"] else "")


def _md_status(a: dict) -> str:
    parts = [f"{k}×{v}" for k, v in a["by_status"].items()]
    return ", ".join(parts + ([f"{a['socket_errors']} socket errors"] if a["socket_errors"] else []))


def _md_held(s: dict) -> str:
    out = []
    for x in (s.get("by_mode") or {"": s}).values():
        if x["still_open_at_end"] and not x["closed_by_server"]:
            v = f"≥ {s['watched_s']:g} s"
        elif x["held_s_median"] is not None:
            v = f"{x['held_s_median']:.1f} s" + (
                f" ({x['still_open_at_end']} ≥ {s['watched_s']:g} s)" if x["still_open_at_end"] else ""
            )
        else:
            v = "–"
        out.append(v)
    return " / ".join(out)


def _md_verdict(ev: dict) -> str:
    code = ev.get("exit_code")
    killed = {True: "yes", False: "no", None: "?"}[oom_verdict(ev)]
    return f"exit {'?' if code is None else code}, OOM-killed {killed}"


def _md_line(line: str, width: int = 100) -> str:
    """A log line in a table cell: cut to `width`, nothing in it read as Markdown or HTML."""
    line = line if len(line) <= width else line[: width - 1] + "…"
    return re.sub(r"([\\`*_|\[\]])", r"\\\1", line).replace("<", "&lt;")


def _md_died(d: dict) -> str:
    """A death in the survived column: where, the exit code and OOM verdict, its log's last 3 lines."""
    ev = d.get("evidence")
    if not ev:
        return f"died in {d['scenario']}"
    tail = [line for line in ev.get("log_tail") or [] if line.strip()][-3:]
    return f"died in {d['scenario']} ({_md_verdict(ev)})" + "".join(f"<br>{_md_line(line)}" for line in tail)


def _md_deaths(recs: list[dict]) -> str:
    """Under the tables: every death with its evidence and its log's last lines, in full."""
    items = []
    for r, d, ev in _deaths(recs):
        tail = ev.get("log_tail") or ["(empty log)"]
        longest = max((len(m) for line in tail for m in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, longest + 1)  # a fence no run of backticks in the log closes
        items.append(
            f"- **{r['target']}** died in {d['scenario']} ({d['phase']}): {_md_verdict(ev)} "
            f"({_evidence_text(ev)}); the last lines of its log:\n\n  {fence}text\n"
            + "".join(f"  {line}\n" for line in tail)
            + f"  {fence}\n"
        )
    return "Deaths, with the last lines of each log:\n\n" + "\n".join(items) if items else ""


def _md_sender(h: dict) -> str:
    if h["outcome"] == "cut":
        return f"cut at {h['bytes_sent'] / 2**20:.1f} MiB" + (f" ({h['status']})" if h["status"] else "")
    return h["outcome"] + (f" ({h['status']})" if h["status"] else "")


def markdown(doc: dict) -> str:
    """The README's resilience tables: upstream faults, then clients and soak, one row per target; under
    them, every death with its evidence."""
    recs = doc["resilience"]
    counts = doc["profile"]["outage_connections"]
    head = (
        "| target | "
        + " | ".join(f"outage at {n}: answered during it (p99 of all sent during it)" for n in counts)
        + " | recovery | slow upstream: answered during it (p99) | survived |\n|---|"
        + "---|" * (len(counts) + 3)
    )
    rows = []
    for r in recs:
        if r["status"] != "ok":
            rows.append(f"| {r['target']} | {r['reason']} |" + " |" * (len(counts) + 2))
            continue
        outs = {o["connections"]: o for o in r.get("outage") or []}
        cells = [_md_during(outs[n]) if n in outs else "–" for n in counts]
        rec = " / ".join(_sec(outs[n]["recovery_s"]) if n in outs else "–" for n in counts)
        su = r.get("slow_upstream")
        slow = _md_during(su) if su else "–"
        died = "; ".join(_md_died(d) for d in r.get("died", []))
        rows.append(f"| {r['target']} | " + " | ".join(cells) + f" | {rec} | {slow} | {died or 'yes'} |")
    p = doc["profile"]
    head2 = (
        f"| target | slow clients held (fresh / after a request / silent) | {p['hostile_bytes'] // 2**20} MiB method "
        f"token / header line / body | normal load at {p['load_connections']}, req/s: alone, with slow clients, "
        "with hostile senders, alone again | working set with slow clients | "
        f"soak {p['soak_connections']}: working set first → last | p99 first → last | errors |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    rows2 = []
    for r in recs:
        c, s = r.get("clients"), r.get("soak")
        if r["status"] != "ok" or not c:
            continue
        n = c["normal_load"]
        loads = [n["alone"], n["with_slow_clients"], n["with_hostile_senders"]] + (
            [n["alone_after"]] if n.get("alone_after") else []
        )
        senders = " / ".join(_md_sender(h) for h in c["hostile"]["senders"])
        if s and not s["alive"]:
            soak = (f"died in slice {len(s['slices'])} of {doc['profile'].get('soak_minutes', '?')}", "–", "–")
        elif s:
            a, b = s["slices"][0], s["slices"][-1]
            soak = (
                f"{fmt_bytes(a['working_set_bytes'])} → {fmt_bytes(b['working_set_bytes'])}",
                f"{_ms(a['p99_ms'])} → {_ms(b['p99_ms'])}",
                f"{sum(x['errors'] for x in s['slices'])}",
            )
        else:
            soak = ("died" if any(d["scenario"] == "soak" for d in r.get("died", [])) else "–", "–", "–")
        rows2.append(
            f"| {r['target']} | {_md_held(c['slow_clients'])} | {senders} | "
            + ", ".join(fmt_num(x["rps"]) for x in loads)
            + _md_warm(r.get("warmup"))
            + " | "
            f"{fmt_bytes(c['slow_clients']['resources_max']['working_set_bytes'])} | " + " | ".join(soak) + " |"
        )
    deaths = _md_deaths(recs)
    return "\n".join([head, *rows, "", head2, *rows2]) + "\n" + (f"\n{deaths}" if deaths else "")


def _md_warm(w: dict | None) -> str:
    """After the normal load's figures: how long the warm-up before them ran, and whether it settled."""
    if not w or w.get("mode") != "stable":
        return ""
    if w.get("converged"):
        return f" (after {w['seconds']:.0f} s of warm-up)"
    return f" (warm-up unsettled at its cap, {w['seconds']:.0f} s)"
