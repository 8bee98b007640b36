"""The ranking: several starts per target, interleaved rounds, intervals, ties and the A/A control.

A run of the block method (`Profile.blocks` > 0) starts every target once per block, warms each up,
then measures it in rounds: each round visits every target once, in a fresh seeded random order, at
the ranking steps (closed loop at the fixed connection count; the fixed offered rate). The variance
of a JVM target lives at two levels — its start (where its JIT settles) and the round (the machine
meanwhile) — so every figure here is summarized at both: a start's level is the median of its
settled rounds, a target's figure the median of its starts' levels, and its 95 % interval comes from
a hierarchical bootstrap (resample the starts, then each chosen start's rounds).

Ratios between two targets (neighbours, the cheapest service, the floor, the A/A pair) are formed
within each round of each block — both were measured minutes apart under the same machine state —
and then summarized the same way, so drift that hits both cancels. Two neighbours are ranked apart
only where the interval of their ratio excludes 1; otherwise they share a rank (tied).

Pure functions over the run file: `rank(doc)` is stored as `doc["ranking"]` and read by the report,
the published page and `python -m bench check`.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence

SEED = 2026  # the bootstrap's seed: the same run file always gives the same intervals
BOOTSTRAP = 2000  # resamples per interval
CONFIDENCE = 0.95
SETTLE_TOLERANCE = 0.05  # a start whose kept rounds' line moves by more than this (and beyond their noise) moves
SETTLE_NOISE = 2.0  # ... and by more than this many times the rounds' own scatter (consecutive differences)
MIN_KEPT = 3  # rounds a settled start keeps at least
LEVEL_GAP = 0.10  # starts whose levels differ by more than this are reported as separate levels
AA_LIMIT = 0.03  # the A/A pair's medians may differ by at most this
RATE_SHORTFALL = 0.01  # a fixed-rate step that delivered less than 99 % of the offered rate is not ranked
STEPS = {"round": "closed", "rate": "rate"}  # step kind in the run file -> ranking step


# ---------------------------------------------------------------- the steady-state test


def drift(values: Sequence[float]) -> float:
    """How far the level moves across the values, relative to their median: the least-squares slope times
    the span, over the median. Least squares, not a robust line, on purpose: a leading round far from the
    rest (a JIT still compiling) must count as movement, so that the test drops it."""
    n = len(values)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, statistics.fmean(values)
    slope = sum((i - mx) * (v - my) for i, v in enumerate(values)) / sum((i - mx) ** 2 for i in range(n))
    med = statistics.median(values)
    return abs(slope) * (n - 1) / med if med else math.inf


def scatter(values: Sequence[float]) -> float:
    """The rounds' own noise, robust to a trend: the median absolute difference between consecutive
    rounds over √2 (the noise of one round, were the rounds independent), relative to their median."""
    diffs = [abs(b - a) for a, b in zip(values, values[1:], strict=False)]
    med = statistics.median(values)
    return statistics.median(diffs) / math.sqrt(2) / med if diffs and med else 0.0


def moving(values: Sequence[float], tolerance: float = SETTLE_TOLERANCE, noise: float = SETTLE_NOISE) -> bool:
    """Whether the level still moves: its least-squares line moves by more than `tolerance` of the median
    across the values, and by more than `noise` times the rounds' own scatter (so that a noisy target's
    scatter is not taken for a trend; a clean ramp of 3 or more rounds always moves)."""
    moved = drift(values)
    return moved > tolerance and moved > noise * scatter(values)


def settle(values: Sequence[float | None], tolerance: float = SETTLE_TOLERANCE, min_kept: int = MIN_KEPT) -> int | None:
    """How many leading rounds to discard so that the rest has stopped moving (`moving`), or None if no
    such point leaves `min_kept` rounds. A round without a figure cannot be kept."""
    n = len(values)
    for k in range(0, n - min_kept + 1):
        kept = values[k:]
        if any(v is None or v <= 0 for v in kept):
            continue
        if not moving(kept, tolerance):  # type: ignore[arg-type]
            return k
    return None


# ---------------------------------------------------------------- intervals


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (q in 0..1)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def median_of_medians(groups: Sequence[Sequence[float]]) -> float:
    return statistics.median(statistics.median(g) for g in groups)


def hierarchical_bootstrap(
    groups: Sequence[Sequence[float]],
    stat: Callable[[Sequence[Sequence[float]]], float] = median_of_medians,
    n: int = BOOTSTRAP,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile interval of `stat` when the groups (starts, or blocks) are resampled with replacement
    and then the values (rounds) within each chosen group. None without data."""
    groups = [list(g) for g in groups if g]
    if not groups:
        return None
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        chosen = [groups[rng.randrange(len(groups))] for _ in groups]
        out.append(stat([[g[rng.randrange(len(g))] for _ in g] for g in chosen]))
    out.sort()
    tail = (1 - confidence) / 2
    return _percentile(out, tail), _percentile(out, 1 - tail)


# ---------------------------------------------------------------- per-start series from the run file


def series(rec: dict, kind: str) -> dict[int, dict]:
    """One start's steps of a ranking kind by round: {round: step}."""
    return {s["round"]: s for s in rec.get("steps", []) if s.get("kind") == kind and s.get("round") is not None}


def _value(step: dict | None) -> float | None:
    if not step or step.get("cpu_ms_per_request") is None:
        return None
    return step["cpu_ms_per_request"] * 1000


def delivered(step: dict) -> float:
    """A fixed-rate step's delivered rate: successes over the attack's span (first send to last answer,
    vegeta's start-up excluded), else over the step's wall time."""
    return step["delivered_rps"] if step.get("delivered_rps") is not None else step.get("rps", 0.0)


def short_of_rate(step: dict) -> bool:
    """A fixed-rate step whose delivered (successful) rate fell short of the offered one by more than 1 %."""
    offered = step.get("target_rate") or step.get("rate")
    return bool(offered) and delivered(step) < (1 - RATE_SHORTFALL) * offered


def round_factors(recs: list[dict], kind: str) -> dict[int, float]:
    """The machine's state per round of one block: the median over the block's targets of each one's
    value in that round relative to its own median (1.0 where fewer than 3 targets have a value). A round
    in which the whole machine ran slower or faster shows in every target alike; the steady-state test
    judges each target's series with it divided out, so that such a round is not taken for a target's
    own trend."""
    rel: dict[int, list[float]] = {}
    for rec in recs:
        vals = {r: _value(s) for r, s in series(rec, kind).items()}
        known = [v for v in vals.values() if v]
        if len(known) < 2:
            continue
        med = statistics.median(known)
        for r, v in vals.items():
            if v:
                rel.setdefault(r, []).append(v / med)
    return {r: statistics.median(x) if len(x) >= 3 else 1.0 for r, x in rel.items()}


def start_record(rec: dict, kind: str, factors: dict[int, float] | None = None) -> dict:
    """A start's series at one ranking step, its steady state (judged with the block's round factors
    divided out, `round_factors`) and its level (the median of the kept rounds, as measured)."""
    steps = series(rec, kind)
    rounds = sorted(steps)
    values = [_value(steps[r]) for r in rounds]
    factors = factors or {}
    judged = [v / factors.get(r, 1.0) if v is not None else None for r, v in zip(rounds, values, strict=True)]
    short = [r for r in rounds if kind == "rate" and short_of_rate(steps[r])]
    out: dict = {
        "block": rec["repeat"],
        "rounds": rounds,
        "values": values,
        "status": rec.get("status"),
        "short_rounds": short,
        "round_factors": [factors.get(r, 1.0) for r in rounds],
    }
    if rec.get("status") != "ok" and not rounds:
        out.update(settled=False, kept_from=None, level=None, why=f"no rounds: {rec.get('reason')}")
        return out
    k = settle(judged)
    if k is None:
        out.update(settled=False, kept_from=None, level=None, why="never settled")
        return out
    kept = [v for v in values[k:] if v is not None]
    out.update(settled=True, kept_from=k, level=statistics.median(kept), why=None)
    if short:
        out.update(why=f"delivered rate short of the offered one in {len(short)} of {len(rounds)} rounds")
    return out


def levels(values: list[float], gap: float = LEVEL_GAP) -> list[dict]:
    """Starts grouped by level: sorted, split where one level is more than `gap` above the previous."""
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v <= out[-1][-1] * (1 + gap):
            out[-1].append(v)
        else:
            out.append([v])
    return [{"level": statistics.median(g), "starts": len(g)} for g in out]


def target_figure(starts: list[dict], seed: int = SEED) -> dict:
    """A target's figure at one step from its settled starts: median of levels, hierarchical interval,
    the levels where its starts differ by more than LEVEL_GAP."""
    ok = [s for s in starts if s["settled"] and not s["short_rounds"]]
    groups = [[v for v in s["values"][s["kept_from"] :] if v is not None] for s in ok]
    if not groups:
        return {"median": None, "interval": None, "half_width": None, "starts": len(starts), "settled": 0}
    med = median_of_medians(groups)
    ci = hierarchical_bootstrap(groups, seed=seed)
    lv = levels([s["level"] for s in ok])
    return {
        "median": med,
        "interval": list(ci) if ci else None,
        "half_width": (ci[1] - ci[0]) / 2 / med if ci and med else None,
        "starts": len(starts),
        "settled": len(ok),
        "levels": lv if len(lv) > 1 else None,
    }


def paired_ratio(a: list[dict], b: list[dict], seed: int = SEED) -> dict | None:
    """a / b per round of each block where both have a kept figure, summarized as the median of the blocks'
    medians with a hierarchical interval (blocks, then rounds); None where they share no round."""
    by_block_b = {s["block"]: s for s in b}
    groups = []
    for sa in a:
        sb = by_block_b.get(sa["block"])
        if not sb or not sa["settled"] or not sb["settled"]:
            continue
        va = dict(zip(sa["rounds"], sa["values"], strict=True))
        vb = dict(zip(sb["rounds"], sb["values"], strict=True))
        ka, kb = sa["rounds"][sa["kept_from"] :], sb["rounds"][sb["kept_from"] :]
        g = [va[r] / vb[r] for r in ka if r in kb and va[r] and vb[r]]
        if g:
            groups.append(g)
    if not groups:
        return None
    ci = hierarchical_bootstrap(groups, seed=seed)
    return {"median": median_of_medians(groups), "interval": list(ci) if ci else None, "blocks": len(groups)}


def excludes_one(r: dict | None) -> bool:
    return bool(r and r["interval"] and (r["interval"][0] > 1 or r["interval"][1] < 1))


# ---------------------------------------------------------------- the whole ranking


def _eligible(name: str, fig: dict, kinds: dict[str, str]) -> bool:
    return kinds[name] in ("bare", "image") and fig["median"] is not None


def rank_step(
    recs_by_target: dict[str, list[dict]],
    kind: str,
    kinds: dict[str, str],
    aa: tuple | None,
    variant_of: dict[str, str] | None = None,
) -> dict:
    """Figures, ranks and ties of every target at one ranking step; `variant_of`: the observability variants
    (bench/observability.py) and their baselines, measured beside the ranking but not ranked."""
    variant_of = variant_of or {}
    blocks: dict[int, list[dict]] = {}
    for recs in recs_by_target.values():
        for r in recs:
            blocks.setdefault(r["repeat"], []).append(r)
    factors = {b: round_factors(rs, kind) for b, rs in blocks.items()}
    starts = {t: [start_record(r, kind, factors[r["repeat"]]) for r in recs] for t, recs in recs_by_target.items()}
    starts = {t: s for t, s in starts.items() if any(x["rounds"] for x in s)}
    figures = {t: target_figure(s) for t, s in starts.items()}
    floor = next((t for t in figures if kinds[t] == "floor"), None)
    # the A/A twin is a control, not a contender: ranked as one service
    ranked = [t for t in figures if _eligible(t, figures[t], kinds) and not (aa and t == aa[1]) and t not in variant_of]
    ranked.sort(key=lambda t: figures[t]["median"])
    rows = []
    rank = 0
    for i, t in enumerate(ranked):
        row = {"target": t, "kind": kinds[t], **figures[t]}
        if i == 0:
            rank = 1
            row["vs_previous"] = None
        else:
            vs = paired_ratio(starts[t], starts[ranked[i - 1]])
            row["vs_previous"] = vs
            if excludes_one(vs):
                rank = i + 1
        row["rank"] = rank
        row["vs_best"] = paired_ratio(starts[t], starts[ranked[0]]) if i else None
        row["vs_floor"] = paired_ratio(starts[t], starts[floor]) if floor else None
        rows.append(row)
    for row in rows:  # tied: shares its rank with a neighbour
        same = [r for r in rows if r["rank"] == row["rank"]]
        row["tied"] = len(same) > 1
    unranked = []
    for t, fig in figures.items():
        if t in ranked:
            continue
        why = "baseline" if kinds[t] in ("floor", "ceiling") else None
        if aa and t == aa[1]:
            why = f"A/A twin of {aa[0]}"
        elif t in variant_of:
            why = f"observability variant of {variant_of[t]}"
        elif fig["median"] is None:
            reasons = sorted({s["why"] for s in starts[t] if s["why"]})
            why = "; ".join(reasons) or "no settled start"
        unranked.append({"target": t, "kind": kinds[t], "why": why, **fig})
    return {"rows": rows, "unranked": unranked, "starts": starts}


def aa_pair(doc: dict) -> tuple[str, str] | None:
    """(original, twin): the target whose meta names it the A/A twin of another."""
    for t in doc.get("targets", []):
        of = (t.get("meta") or {}).get("aa_of")
        if of:
            return of, t["name"]
    return None


def rank(doc: dict) -> dict | None:
    """The run's ranking (None for a run without rounds)."""
    if not doc.get("profile", {}).get("blocks"):
        return None
    by_target: dict[str, list[dict]] = {}
    for r in doc["results"]:
        by_target.setdefault(r["target"], []).append(r)
    kinds = {t: rs[0]["kind"] for t, rs in by_target.items()}
    aa = aa_pair(doc)
    variant_of = {
        t["name"]: t["meta"]["variant_of"]
        for t in doc.get("targets", [])
        if (t.get("meta") or {}).get("variant_of") and t["meta"]["variant_of"] != t["name"]
    }
    out: dict = {
        "method": {
            "blocks": doc["profile"]["blocks"],
            "rounds": doc["profile"]["rounds"],
            "bootstrap": BOOTSTRAP,
            "seed": SEED,
            "confidence": CONFIDENCE,
            "settle": f"leading rounds dropped until the least-squares line through the rest moves by at most "
            f"{SETTLE_TOLERANCE:.0%} of their median, or by at most {SETTLE_NOISE:g}× their scatter (the median "
            f"difference between consecutive rounds over √2); "
            f"at least {MIN_KEPT} rounds kept, else the start never settled",
            "level_gap": LEVEL_GAP,
            "rate_shortfall": RATE_SHORTFALL,
        },
        "aa": None,
        "steps": {},
    }
    for kind, step in STEPS.items():
        if any(series(r, kind) for rs in by_target.values() for r in rs):
            out["steps"][step] = rank_step(by_target, kind, kinds, aa, variant_of)
    closed = out["steps"].get("closed")
    if aa and closed:
        figs = {**{r["target"]: r for r in closed["rows"]}, **{r["target"]: r for r in closed["unranked"]}}
        a, b = figs.get(aa[0]), figs.get(aa[1])
        ratio = paired_ratio(closed["starts"].get(aa[1], []), closed["starts"].get(aa[0], []))
        out["aa"] = {
            "targets": list(aa),
            "medians": [a["median"] if a else None, b["median"] if b else None],
            "intervals": [a["interval"] if a else None, b["interval"] if b else None],
            "ratio": ratio,
        }
    return out


def start_at_fixed(rec: dict, start: dict, connections: int) -> dict:
    """A start's figures at the fixed count from its rounds: its level (the median of the rounds kept by
    the steady-state test) and the medians of the same rounds' other figures. An unsettled start keeps the
    median of all its rounds here, marked, and stays out of the ranking."""
    steps = series(rec, "round")
    kept = [steps[r] for r in start["rounds"][start["kept_from"] or 0 :]]
    known = [v for v in start["values"] if v is not None]
    cpu_us = start["level"] if start["settled"] else (statistics.median(known) if known else None)

    def med(f: Callable[[dict], float | None]) -> float | None:
        vs = [v for v in map(f, kept) if v is not None]
        return statistics.median(vs) if vs else None

    return {
        "connections": connections,
        "rps": med(lambda s: s["rps"]),
        "cpu_us_per_request": cpu_us,
        "requests_per_cpu_s": 1e6 / cpu_us if cpu_us else None,
        "p50_ms": med(lambda s: s["latency_ms"]["p50"]),
        "p99_ms": med(lambda s: s["latency_ms"]["p99"]),
        "error_ratio": max((s["error_ratio"] for s in kept), default=None),
        "settled": start["settled"],
        "kept_from_round": start["kept_from"],
    }


def apply(doc: dict) -> None:
    """A block-method run's ranking (`doc["ranking"]`) and each start's figures at the fixed count from its
    kept rounds (`totals.at_fixed`), both from the whole run: the round factors need every target."""
    doc["ranking"] = rank(doc)
    closed = (doc["ranking"] or {}).get("steps", {}).get("closed")
    if not closed:
        return
    n = doc["profile"]["fixed_connections"]
    for rec in doc["results"]:
        start = next((s for s in closed["starts"].get(rec["target"], []) if s["block"] == rec["repeat"]), None)
        if start and rec.get("totals"):
            rec["totals"]["at_fixed"] = start_at_fixed(rec, start, n)


def aa_problems(aa: dict | None, limit: float = AA_LIMIT) -> list[str]:
    """Why the A/A control fails: medians more than `limit` apart, or intervals that do not overlap."""
    if not aa:
        return ["no A/A pair in the run"]
    (ma, mb), (ia, ib) = aa["medians"], aa["intervals"]
    if ma is None or mb is None or ia is None or ib is None:
        return [f"A/A pair {' / '.join(aa['targets'])}: a twin has no settled figure"]
    problems = []
    diff = abs(mb / ma - 1)
    if diff > limit:
        problems.append(f"A/A pair {' / '.join(aa['targets'])}: medians {ma:.1f} and {mb:.1f} µs differ by {diff:.1%}")
    if ia[1] < ib[0] or ib[1] < ia[0]:
        problems.append(f"A/A pair {' / '.join(aa['targets'])}: intervals {ia} and {ib} do not overlap")
    return problems
