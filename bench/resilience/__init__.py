"""Resilience: how each target fails, holds up and recovers under load (`python -m bench resilience`).

Every target (each service bare and as its image, under the benchmark's limits and placement) goes
through four scenarios, each bounded in time, all traffic on 127.0.0.1:

1. upstream outage under load: the suite's faulting proxy (conformance/proxy.py) in front of
   Elasticsearch refuses every connection for `fault_s`, at each of `outage_connections`;
2. slow upstream: the proxy holds every Elasticsearch request for twice ELASTICSEARCH_TIMEOUT_MS
   for `fault_s`, under the normal load;
3. slow and abusive clients beside a normal closed-loop load at `load_connections`: `slow_clients`
   connections that trickle one header byte every `slow_interval_s`, then three hostile senders
   (a method token, a header line and a body of `hostile_bytes` each);
4. soak: `soak_connections` for `soak_minutes` slices of `soak_slice_s`, drift first → last slice.

The outage and slow-upstream scenarios need per-request timing (what answered when), so their
load is vegeta in a closed loop (`-rate=0 -max-workers=N`: N workers, each sending its next
request when the last one is answered) with per-request results; the others use wrk like the main
run. Memory is the working set (cgroup usage minus inactive file cache, what Kubernetes evicts
by), sampled with the open file descriptors and threads every `sample_s` by a thread of the harness.

Before the first phase each target warms up at the normal load until its CPU per request has
stopped moving, by the main run's rule (bench/warmup.py: windows of `warm_window_s`, at most
`warm_cap_s`), so that the normal load it serves beside the slow clients is its steady state, not
its JIT's warm-up; the record keeps the windows and whether it settled.

A target that dies is a finding: each entry of `died` keeps its evidence (bench/targets.py,
`death_evidence`: exit code, the kernel's OOM verdict, its log's last lines), read before it is stopped.
"""

from __future__ import annotations

# The entry points bench/cli.py uses; the scenarios, the machinery they share and the report are the
# modules beside this one, which import one another and never this package.
from .config import PROFILES, SCHEMA, Config, Profile
from .findings import check, words
from .phases import run

__all__ = ["PROFILES", "SCHEMA", "Config", "Profile", "check", "run", "words"]
