"""The warm-up before each phase: before the first, the normal load until the target's CPU per
request has stopped moving (the main run's rule, bench/warmup.py); before the second, a fixed share
of the profile's warm-up."""

from __future__ import annotations

from .. import load, runner, warmup
from ..metrics import step_metrics
from ..targets import CgroupMeter
from .scenario import Ctx, wrk_figures


def warm(ctx: Ctx, share: float = 1.0) -> dict:
    """`share` of the profile's warm-up at the normal load."""
    p = ctx.cfg.profile
    seconds = max(1.0, p.warm_s * share)
    ctx.show(f"warm-up, {p.load_connections} connections, {seconds:g} s")
    m = load.run_wrk(ctx.url, p.load_connections, seconds, {}, ctx.load_cpus, ctx.cfg.timeout_s)
    if m["successes"] == 0:
        raise RuntimeError("the warm-up got no successful answer")
    return wrk_figures(m)


def warm_until_stable(ctx: Ctx) -> dict:
    """Phase 1's warm-up: windows of the normal load until the CPU per request is stable (the main
    run's rule and tolerance), at most `warm_cap_s`: the warm-up record (bench/warmup.py) with each
    window's req/s. The fixed `warm` when the profile has no cap or the cgroup gives no CPU figures."""
    p = ctx.cfg.profile
    if not p.warm_cap_s or not isinstance(ctx.running.meter, CgroupMeter):
        return warm(ctx)
    rule = warmup.Rule(p.load_connections, p.warm_window_s, p.warm_cap_s, runner.Profile.stable_tolerance)
    meter = ctx.running.meter

    def window(n: int, seconds: float) -> dict:
        ctx.show(f"warm-up until stable (at most {p.warm_cap_s:g} s), {n} connections, {seconds:g} s windows")
        before = meter.sample()
        m = load.run_wrk(ctx.url, n, seconds, {}, ctx.load_cpus, ctx.cfg.timeout_s)
        return step_metrics(m, before, meter.sample())

    steps, record = warmup.until_stable(rule, window)
    if sum(s["successes"] for s in steps) == 0:
        raise RuntimeError("the warm-up got no successful answer")
    return record | {"window_rps": [s["rps"] for s in steps]}
