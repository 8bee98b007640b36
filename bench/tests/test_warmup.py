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


def test_stops_at_the_first_three_agreeing_windows() -> None:
    window, calls = window_source([300, 200, 150, 120, 118, 117, 116])
    steps, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.03), window)
    assert len(steps) == 6 and calls == [(64, 5)] * 6
    assert rec["converged"] and not rec["capped"]
    assert rec["seconds"] == 30
    assert rec["window_cpu_us_per_request"] == pytest.approx([300, 200, 150, 120, 118, 117])
    assert rec["mode"] == "stable" and rec["windows"] == 6 and rec["tolerance"] == 0.03
    assert rec["agreeing"] == 3


def test_two_neighbours_agreeing_by_chance_are_not_enough() -> None:
    # a JIT still compiling: 197 and 192 are within 3 %, but the curve goes on down
    window, calls = window_source([197, 192, 150, 110, 80, 62, 61, 60.5, 60])
    _, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.03), window)
    assert rec["converged"] and rec["window_cpu_us_per_request"][-3:] == pytest.approx([62, 61, 60.5])
    _, two = warmup.until_stable(warmup.Rule(64, 5, 60, 0.03, agreeing=2), window_source([197, 192, 150])[0])
    assert two["windows"] == 2  # the old two-window rule stopped there


def test_all_agree() -> None:
    assert warmup.all_agree([100, 102, 103], 0.03)
    assert not warmup.all_agree([100, 102, 103.5], 0.03)
    assert not warmup.all_agree([100, None, 100], 0.03) and not warmup.all_agree([], 0.03)


def test_hits_the_cap_when_windows_keep_moving() -> None:
    window, calls = window_source([100 * 0.9**i for i in range(20)])  # 10 % cheaper every window
    steps, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.03), window)
    assert len(calls) == 12  # 60 s of 5-second windows, not one more
    assert not rec["converged"] and rec["capped"] and rec["seconds"] == 60


def test_windows_without_figures_never_converge() -> None:
    window, _ = window_source([None] * 10)
    _, rec = warmup.until_stable(warmup.Rule(4, 1, 3, 0.03), window)
    assert rec["windows"] == 3 and rec["capped"]


def test_as_many_windows_as_must_agree_at_least() -> None:
    assert warmup.Rule(64, 5, 60, 0.03).max_windows == 12
    assert warmup.Rule(64, 10, 120, 0.03).max_windows == 12
    assert warmup.Rule(64, 5, 5, 0.03).max_windows == 3
    assert warmup.Rule(64, 5, 5, 0.03, agreeing=2).max_windows == 2
    window, calls = window_source([100, 100, 100])
    _, rec = warmup.until_stable(warmup.Rule(64, 5, 60, 0.03), window)
    assert len(calls) == 3 and rec["converged"]


def test_fixed_record() -> None:
    steps = [{"duration_s": 5.0, "connections": 1, "cpu_ms_per_request": None}] * 2
    rec = warmup.fixed(steps, "no CPU figures for this target")
    assert rec["mode"] == "fixed" and rec["seconds"] == 10 and rec["windows"] == 2
    assert rec["converged"] is None and rec["capped"] is False and rec["connections"] == [1, 1]
