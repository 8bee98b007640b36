"""What a run's figures say, read from its records alone: one sentence per scenario for each target
(`words`: kept in the run file, recomputed by the report so that an older run file gets the current
wording) and what makes a run file unusable (`check`)."""

from __future__ import annotations

from ..targets import death_words
from .clients import HOSTILE, SLOW_MODES
from .config import SCHEMA, MiB

# -- plain words ----------------------------------------------------------------------------------


def _s(v: float | None) -> str:
    if v is None:
        return "?"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s"


def _recovery(v: float) -> str:
    """The recovery at the resolution of its bins."""
    return "≤ 0.1 s" if v <= 0.1 else _s(v)


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n / 1024:.0f} KiB"


def words(rec: dict) -> str:
    """One sentence per scenario, from the figures."""
    parts = [
        f"DIES in {d['scenario']} ({d['phase']})"
        + (f", {death_words(d.get('evidence'))}" if d.get("evidence") else "")
        + f": {d['detail'][:120]}"
        for d in rec.get("died", [])
    ]
    outs = rec.get("outage") or []
    if outs:
        only503 = all(_only(o, "503") for o in outs)
        p99 = "/".join(_s((o["during"]["p99_ms"] or 0) / 1000) for o in outs)
        rec_s = [o["recovery_s"] for o in outs]
        recovered = (
            "recovers in " + "/".join(_recovery(r) for r in rec_s)
            if all(r is not None for r in rec_s)
            else "does not recover within the run"
        )
        counts = "/".join(str(o["connections"]) for o in outs)
        parts.append(
            ("outage: only 503s" if only503 else "outage: not only 503s")
            + f", p99 {p99} at {counts} connections, {recovered}"
        )
    su = rec.get("slow_upstream")
    if su:
        d = su["during"]
        parts.append(
            ("slow upstream: only 504s" if _only(su, "504") else f"slow upstream: {_status_text(_answered(su))}")
            + f", p99 {_s((d['p99_ms'] or 0) / 1000)}"
            + (f", recovers in {_recovery(su['recovery_s'])}" if su["recovery_s"] is not None else ", no recovery seen")
        )
    cl = rec.get("clients")
    if cl:
        sc = cl["slow_clients"]
        held = "; ".join(
            _held(m, sc["by_mode"][m], sc["watched_s"]) for m in SLOW_MODES if m in sc.get("by_mode", {})
        ) or _held("", sc, sc["watched_s"])
        cut = [
            f"{h['kind']} {h['outcome']}" + (f" after {_size(h['bytes_sent'])}" if h["outcome"] == "cut" else "")
            for h in cl["hostile"]["senders"]
        ]
        size = _size(cl["hostile"]["senders"][0]["size"]) if cut else ""
        parts.append(held + f"; {size} senders: " + ", ".join(cut) if cut else held)
    so = rec.get("soak")
    if so and not so["alive"]:
        parts.append(f"soak: dies after {len(so['slices'])} of its slices")
    elif so:
        d = so["drift"]
        parts.append(
            f"soak: working set {_signed_size(d['working_set_bytes'])}, fds {_signed(d['fds'])}, "
            f"p99 {_signed(d['p99_ms'], ' ms')} over {len(so['slices'])} slices"
        )
    return "; ".join(parts)


def _answered(fault: dict) -> dict:
    """The answers given while the fault lasted (older run files: every request sent during it)."""
    return fault.get("during_answered") or fault["during"]


def _only(fault: dict, status: str) -> bool:
    a = _answered(fault)
    return set(a["by_status"]) <= {status} and not a["socket_errors"]


def _held(mode: str, sc: dict, watched: float) -> str:
    """How the server treated one kind of slow client, in words."""
    what = f"slow clients ({mode})" if mode else "slow clients"
    if sc["connections"] and sc["refused"] == sc["connections"]:
        return f"{what}: none accepted"
    if sc["still_open_at_end"] == 0 and sc["held_s_median"] is not None:
        return f"cuts {what} after {_s(sc['held_s_median'])}"
    if sc["closed_by_server"] == 0:
        return f"holds {what} ≥ {watched:g} s"
    return f"cuts {sc['closed_by_server']} of {sc['connections']} {what}, holds the rest ≥ {watched:g} s"


def _status_text(a: dict) -> str:
    s = ", ".join(f"{k}×{v}" for k, v in a["by_status"].items())
    return s + (f", {a['socket_errors']} socket errors" if a["socket_errors"] else "")


def _signed(v: float | None, unit: str = "") -> str:
    return "?" if v is None else f"{v:+.0f}{unit}"


def _signed_size(v: int | None) -> str:
    return "?" if v is None else ("+" if v >= 0 else "−") + _size(abs(v))


def check(doc: dict) -> list[str]:
    """What makes a resilience run file unusable: failed targets, a scenario missing its figures."""
    problems = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema {doc.get('schema')!r} is not {SCHEMA}")
    if not doc.get("resilience"):
        problems.append("no resilience results")
    for r in doc.get("resilience", []):
        name = r["target"]
        if r["status"] != "ok":
            problems.append(f"{name}: {r['reason']}")
            continue
        explained = " ".join(r.get("skipped", [])) + " ".join(d["scenario"] for d in r.get("died", []))
        for key in ("clients", "soak", "outage", "slow_upstream"):
            if not r.get(key) and key not in explained:
                problems.append(f"{name}: no {key} figures")
        for o in r.get("outage") or []:
            if not o["during"]["requests"]:
                problems.append(f"{name}: no request during the outage at {o['connections']}")
            if o["before"]["by_status"].get("200", 0) == 0:
                problems.append(f"{name}: no 200 before the outage at {o['connections']}")
        if r.get("soak") and r["soak"]["alive"] and len(r["soak"]["slices"]) != doc["profile"]["soak_minutes"]:
            problems.append(f"{name}: soak slices missing")
        if r.get("clients") and len(r["clients"]["hostile"]["senders"]) != len(HOSTILE):
            problems.append(f"{name}: hostile senders missing")
    return problems
