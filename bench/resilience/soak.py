"""Soak: `soak_connections` for `soak_minutes` slices of `soak_slice_s` (wrk), each slice's figures
and the drift from the first slice to the last."""

from __future__ import annotations

import time

from .. import load
from .sampling import resources
from .scenario import Ctx, Died, evidence, wrk_figures


def soak(ctx: Ctx) -> dict:
    p, cfg = ctx.cfg.profile, ctx.cfg
    slices = []
    died = False
    for i in range(p.soak_minutes):
        ctx.show(f"soak, {p.soak_connections} connections, slice {i + 1}/{p.soak_minutes} of {p.soak_slice_s:g} s")
        t0 = time.time()
        try:
            m = load.run_wrk(ctx.url, p.soak_connections, p.soak_slice_s, {}, ctx.load_cpus, cfg.timeout_s)
        except RuntimeError:
            if ctx.sampler.one().get("alive"):
                raise
            died = True
            break
        t1 = time.time()
        end = ctx.sampler.one()
        slices.append(
            wrk_figures(m)
            | {
                "working_set_bytes_max": resources(ctx.sampler.window(t0, t1))["working_set_bytes"],
                "working_set_bytes": end.get("working_set_bytes"),
                "usage_bytes": end.get("usage_bytes"),
                "fds": end.get("fds"),
                "threads": end.get("threads"),
            }
        )
    if not slices:
        raise Died("gone in the first slice of the soak")
    first, lastv = slices[0], slices[-1]

    def drift(key: str) -> float | None:
        a, b = first.get(key), lastv.get(key)
        return None if a is None or b is None else b - a

    out = {
        "connections": p.soak_connections,
        "slice_s": p.soak_slice_s,
        "slices": slices,
        "drift": {k: drift(k) for k in ("working_set_bytes", "fds", "threads", "errors", "p99_ms", "rps")},
        "alive": not died and bool(ctx.sampler.one().get("alive")),
    }
    if not out["alive"]:  # beside its slices, what the soak ended with
        out["evidence"] = evidence(ctx.running)
    return out
