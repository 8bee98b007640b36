import pytest

from bench import warmup


def window_source(cpu_us: list[float | None]):
    """A fake window(connections, seconds): the given CPU µs per request, one per call."""
    calls: list[tuple[int, float]] = []
    values = iter(cpu_us)

    def window(connections: int, seconds: float) -> dict:
        calls.append((connections, seconds))
        v = next(values)
        return {"duration_s": seconds, "cpu_ms_per_request": None if v is None else v / 1000}

    return window, calls


def test_agree_is_relative_to_the_earlier_window() -> None:
    assert warmup.agree(100, 103, 0.03)
    assert warmup.agree(100, 97, 0.03)
    assert not warmup.agree(100, 103.5, 0.03)
    assert not warmup.agree(None, 100, 0.03) and not warmup.agree(100, None, 0.03)
    assert not warmup.agree(0, 0, 0.03)


def test_stops_when_the_level_stops_moving() -> None:
    # medians of [150, 120, 118] and [117, 116, 117]: 120 against 117, within 5 %
    window, calls = window_source([300, 200, 150, 120, 118, 117, 116, 117, 119, 118])
    steps, rec = warmup.until_stable(warmup.Rule(64, 5, 90, 0.05), window)
    assert rec["converged"] and not rec["capped"]
    assert len(steps) == 8 and calls == [(64, 5)] * 8
    assert rec["seconds"] == 40 and rec["steady_after_s"] == 40
    assert rec["window_cpu_us_per_request"] == pytest.approx([300, 200, 150, 120, 118, 117, 116, 117])
    assert rec["mode"] == "stable" and rec["windows"] == 8 and rec["tolerance"] == 0.05 and rec["agreeing"] == 3
    assert "median" in rec["rule"]


def test_noisy_windows_of_a_settled_target_converge() -> None:
    # a JVM target on this machine: 5 s windows scatter by ±10 % once compiled (kotlin-ktor's, measured)
    values = [810, 425, 362, 259, 201, 186, 105, 82, 94, 90, 84, 96, 91]
    _, rec = warmup.until_stable(warmup.Rule(64, 5, 90, 0.05), window_source(values)[0])
    assert rec["converged"] and rec["steady_after_s"] == 60  # [82, 94, 90] → 90; [84, 96, 91] → 91
    _, old = warmup.until_stable(warmup.Rule(64, 5, 90, 0.03, agreeing=3), window_source(values + [88] * 5)[0])
    assert old["converged"]  # the medians tolerate what "every window within 3 %" did not


def test_neighbours_agreeing_by_chance_are_not_enough() -> None:
    # a JIT still compiling: 197 and 192 are within 3 %, but the curve goes on down
    window, _ = window_source([197, 192, 190, 150, 110, 80, 62, 61, 60.5, 60, 61, 60])
    _, rec = warmup.until_stable(warmup.Rule(64, 5, 90, 0.05), window)
    assert rec["converged"] and rec["window_cpu_us_per_request"][-3:] == pytest.approx([60.5, 60, 61])


def test_settled() -> None:
    assert warmup.settled([100, 102, 104, 101, 99, 103], 3, 0.05)
    assert not warmup.settled([100, 102, 104, 90, 91, 92], 3, 0.05)  # the level dropped by 10 %
    assert not warmup.settled([100, 102, 104, 120, 121, 119], 3, 0.05)  # or rose
    assert not warmup.settled([100, 100, 100, 100, 100], 3, 0.05)  # two full groups needed
    assert not warmup.settled([100, None, 100, 100, 100, 100], 3, 0.05)


def test_hits_the_cap_when_windows_keep_moving() -> None:
    window, calls = window_source([100 * 0.9**i for i in range(20)])  # 10 % cheaper every window
    steps, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.05), window)
    assert len(calls) == 12  # 60 s of 5-second windows, not one more
    assert not rec["converged"] and rec["capped"] and rec["seconds"] == 60 and rec["steady_after_s"] is None


def test_windows_without_figures_never_converge() -> None:
    window, _ = window_source([None] * 10)
    _, rec = warmup.until_stable(warmup.Rule(4, 1, 3, 0.05, agreeing=2), window)
    assert rec["windows"] == 4 and rec["capped"]


def test_two_groups_of_windows_at_least() -> None:
    assert warmup.Rule(64, 5, 60, 0.05).max_windows == 12
    assert warmup.Rule(64, 10, 120, 0.05).max_windows == 12
    assert warmup.Rule(64, 5, 5, 0.05).max_windows == 6
    assert warmup.Rule(64, 5, 5, 0.05, agreeing=2).max_windows == 4
    window, calls = window_source([100] * 6)
    _, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.05), window)
    assert len(calls) == 6 and rec["converged"]


def test_fixed_record() -> None:
    steps = [{"duration_s": 5.0, "connections": 1, "cpu_ms_per_request": None}] * 2
    rec = warmup.fixed(steps, "no CPU figures for this target")
    assert rec["mode"] == "fixed" and rec["seconds"] == 10 and rec["windows"] == 2
    assert rec["converged"] is None and rec["capped"] is False and rec["connections"] == [1, 1]
