"""The ranking's statistics on known inputs (fixed seed): steady state, intervals, per-round ratios, ties, A/A."""

from __future__ import annotations

import pytest

from bench import ranking


def step(kind: str, rnd: int, cpu_us: float | None, rps: float = 1000.0, rate: int | None = None) -> dict:
    return {
        "kind": kind,
        "round": rnd,
        "cpu_ms_per_request": None if cpu_us is None else cpu_us / 1000,
        "rps": rps,
        "rate": rate,
        "target_rate": rate,
        "latency_ms": {"p50": 1.0, "p99": 2.0},
        "error_ratio": 0.0,
    }


def rec(target: str, kind: str, block: int, values: list[float | None], status: str = "ok", **meta) -> dict:
    return {
        "target": target,
        "kind": kind,
        "repeat": block,
        "status": status,
        "reason": None if status == "ok" else "died",
        "meta": meta,
        "steps": [step("round", i, v) for i, v in enumerate(values)],
    }


def doc(results: list[dict], aa: tuple[str, str] | None = None) -> dict:
    names = list(dict.fromkeys(r["target"] for r in results))
    kinds = {r["target"]: r["kind"] for r in results}
    return {
        "profile": {"name": "publish", "blocks": max(r["repeat"] for r in results) + 1, "rounds": 5},
        "targets": [
            {"name": n, "kind": kinds[n], "meta": {"aa_of": aa[0]} if aa and n == aa[1] else {}} for n in names
        ],
        "results": results,
    }


# ---------------------------------------------------------------- steady state


def test_drift_of_a_line() -> None:
    assert ranking.drift([100, 101, 102, 103, 104]) == pytest.approx(4 / 102)
    assert ranking.drift([100, 100, 100]) == 0


def test_scatter_is_the_median_consecutive_difference() -> None:
    assert ranking.scatter([100, 100, 100]) == 0
    assert ranking.scatter([100, 100, 150, 100, 100, 100]) == 0  # one stray round does not count as noise
    assert ranking.scatter([118, 141, 136]) == pytest.approx(14 / 2**0.5 / 136)


def test_three_noisy_rounds_settle_and_a_three_round_ramp_does_not() -> None:
    assert ranking.settle([118, 141, 136]) == 0
    assert ranking.settle([100, 90, 80]) is None


def test_settle_drops_the_leading_rounds_until_the_level_stops() -> None:
    assert ranking.settle([150, 120, 100, 101, 99, 100]) == 2
    assert ranking.settle([441, 193, 179, 191, 188]) == 1  # a JIT still compiling in the first round
    assert ranking.settle([100, 99, 101, 100, 100]) == 0


def test_a_ramp_never_settles() -> None:
    assert ranking.settle([100, 90, 80, 70, 60, 50]) is None


def test_noise_without_a_trend_settles() -> None:
    # go-kit's consecutive windows scatter by tens of per cent with no trend: scatter, not movement
    assert ranking.settle([68, 104, 75, 98, 70, 101]) == 0


def test_a_round_without_a_figure_is_not_kept() -> None:
    assert ranking.settle([None, 100, 101, 100]) == 1
    assert ranking.settle([100, None, 100]) is None


# ---------------------------------------------------------------- intervals


def test_bootstrap_is_reproducible_and_brackets_the_median() -> None:
    groups = [[100, 102, 98, 101], [99, 100, 103, 97], [101, 100, 99, 102]]
    a = ranking.hierarchical_bootstrap(groups, seed=1)
    assert a == ranking.hierarchical_bootstrap(groups, seed=1)
    lo, hi = a
    assert lo <= ranking.median_of_medians(groups) <= hi
    assert lo >= 97 and hi <= 103


def test_bootstrap_of_identical_values_has_no_width() -> None:
    assert ranking.hierarchical_bootstrap([[5, 5], [5, 5]]) == (5, 5)


def test_bootstrap_widens_with_the_spread_between_starts() -> None:
    tight = ranking.hierarchical_bootstrap([[100, 101], [100, 101], [100, 101]])
    apart = ranking.hierarchical_bootstrap([[70, 71], [100, 101], [110, 111]])
    assert apart[1] - apart[0] > 10 * (tight[1] - tight[0])


def test_levels_split_starts_that_settle_apart() -> None:
    assert ranking.levels([67, 69, 112]) == [{"level": 68, "starts": 2}, {"level": 112, "starts": 1}]
    assert ranking.levels([100, 104, 108]) == [{"level": 104, "starts": 3}]


# ---------------------------------------------------------------- per-round ratios and ties


def starts(values_per_block: list[list[float]]) -> list[dict]:
    return [ranking.start_record(rec("t", "image", b, v), "round") for b, v in enumerate(values_per_block)]


def test_paired_ratio_cancels_drift_that_hits_both() -> None:
    # both drift by the same factor from round to round and block to block: the ratio is exactly 1.1
    drift = [[100, 104, 97, 102, 99], [110, 114, 107, 112, 109], [95, 99, 92, 97, 94]]
    a = starts([[v * 1.1 for v in blk] for blk in drift])
    b = starts(drift)
    r = ranking.paired_ratio(a, b)
    assert r["median"] == pytest.approx(1.1)
    assert r["interval"] == pytest.approx([1.1, 1.1])
    assert ranking.excludes_one(r)


def test_ratio_within_the_noise_includes_one() -> None:
    a = starts([[100, 103, 98, 101, 99], [102, 98, 100, 101, 99]])
    b = starts([[101, 99, 100, 102, 98], [99, 101, 103, 98, 100]])
    assert not ranking.excludes_one(ranking.paired_ratio(a, b))


def test_ranks_and_ties() -> None:
    rows = []
    for b in range(3):
        rows += [
            rec("rust (image)", "image", b, [40, 40.5, 39.8, 40.2, 40.1]),
            rec("ktor (image)", "image", b, [92, 95, 91, 94, 93]),
            rec("helidon (image)", "image", b, [93, 92, 95, 92, 94]),
            rec("floor", "floor", b, [20, 20.2, 19.9, 20.1, 20]),
        ]
    rk = ranking.rank(doc(rows))
    closed = rk["steps"]["closed"]
    got = {r["target"]: (r["rank"], r["tied"]) for r in closed["rows"]}
    assert got == {"rust (image)": (1, False), "ktor (image)": (2, True), "helidon (image)": (2, True)}
    assert [u["target"] for u in closed["unranked"]] == ["floor"]
    ktor = next(r for r in closed["rows"] if r["target"] == "ktor (image)")
    assert ktor["vs_floor"]["median"] == pytest.approx(93 / 20, rel=0.02)
    assert ktor["vs_best"]["median"] == pytest.approx(93 / 40.1, rel=0.02)


def test_an_unsettled_start_is_left_out_and_a_target_without_one_is_not_ranked() -> None:
    rows = []
    for b in range(3):
        rows.append(rec("a (image)", "image", b, [100, 101, 99, 100, 100]))
        rows.append(rec("b (image)", "image", b, [100, 90, 80, 70, 60]))
    rk = ranking.rank(doc(rows))
    closed = rk["steps"]["closed"]
    assert [r["target"] for r in closed["rows"]] == ["a (image)"]
    assert closed["unranked"][0]["why"] == "never settled"


def test_a_short_fixed_rate_step_is_not_ranked() -> None:
    r = rec("a (image)", "image", 0, [])
    r["steps"] = [step("rate", i, 50, rps=1900 if i == 2 else 2000, rate=2000) for i in range(5)]
    s = ranking.start_record(r, "rate")
    assert s["short_rounds"] == [2]
    assert ranking.target_figure([s])["median"] is None


# ---------------------------------------------------------------- the A/A control


def aa_doc(twin_values: list[list[float]]) -> dict:
    rows = []
    for b, tv in enumerate(twin_values):
        rows.append(rec("helidon (image)", "image", b, [70, 71, 69, 70, 70.5]))
        rows.append(rec("helidon (image, A/A twin)", "image", b, tv))
    return doc(rows, aa=("helidon (image)", "helidon (image, A/A twin)"))


def test_aa_within_its_limit_passes() -> None:
    rk = ranking.rank(aa_doc([[70.5, 70, 71, 69.5, 70]] * 3))
    assert rk["aa"]["targets"] == ["helidon (image)", "helidon (image, A/A twin)"]
    assert ranking.aa_problems(rk["aa"]) == []
    assert [r["target"] for r in rk["steps"]["closed"]["rows"]] == ["helidon (image)"]


def test_aa_apart_fails_with_both_reasons() -> None:
    rk = ranking.rank(aa_doc([[80, 81, 79, 80, 80.5]] * 3))
    problems = ranking.aa_problems(rk["aa"])
    assert any("differ by" in p for p in problems)
    assert any("do not overlap" in p for p in problems)


def test_no_aa_pair_is_a_problem() -> None:
    assert ranking.aa_problems(None) == ["no A/A pair in the run"]


def test_a_round_that_slows_the_whole_machine_is_not_a_targets_trend() -> None:
    # round 4 and 5 run 15 % cheaper for every target (the machine), rust-actix's own level does not move
    machine = [1, 1, 1, 1, 0.85, 0.85]
    rows = [
        rec("rust (image)", "image", 0, [100 * m for m in machine]),
        rec("go (image)", "image", 0, [200 * m for m in [1.02, 0.98, 1, 1.01, 0.85, 0.86]]),
        rec("floor", "floor", 0, [50 * m for m in machine]),
    ]
    alone = ranking.start_record(rows[0], "round")
    assert not alone["settled"]  # judged alone, the machine's step looks like a trend
    rk = ranking.rank(doc(rows))
    rust = rk["steps"]["closed"]["starts"]["rust (image)"][0]
    assert rust["settled"] and rust["kept_from"] == 0
    assert rust["round_factors"] == pytest.approx(machine)


def test_apply_sets_each_starts_fixed_count_figures_from_its_kept_rounds() -> None:
    rows = [rec("a (image)", "image", b, [300, 100, 101, 99, 100]) for b in range(3)]
    for r in rows:
        r["totals"] = {"at_fixed": None}
    d = doc(rows)
    d["profile"]["fixed_connections"] = 64
    ranking.apply(d)
    fixed = rows[0]["totals"]["at_fixed"]
    assert fixed["cpu_us_per_request"] == 100 and fixed["kept_from_round"] == 1 and fixed["connections"] == 64
    assert d["ranking"]["steps"]["closed"]["rows"][0]["median"] == 100
