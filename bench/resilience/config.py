"""The resilience run's settings: its profiles (how hard and how long each scenario goes) and its
configuration, with the run file's schema and the upstream timeout every target runs with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import runner
from ..targets import Target

SCHEMA = "cityref-bench-resilience/1"
TIMEOUT_MS = 2000  # the contract's default ELASTICSEARCH_TIMEOUT_MS, which every target runs with
MiB = 2**20


@dataclass
class Profile:
    name: str
    warm_s: float  # load at load_connections before the first phase, a third of it before the second
    load_connections: int  # the normal closed-loop load
    outage_connections: list[int]
    before_s: float  # load before a fault
    fault_s: float  # how long the fault lasts
    after_s: float  # load after it: the recovery is looked for in this window
    slow_clients: int
    slow_interval_s: float  # one header byte per slow connection every this many seconds
    slow_hold_cap_s: float  # how long the slow connections are watched
    slow_load_s: float  # each normal-load measurement of the slow-client scenario
    hostile_bytes: int
    hostile_stall_s: float  # a sender that cannot write for this long: the server stopped reading
    soak_connections: int
    soak_minutes: int  # slices
    soak_slice_s: float = 60.0
    sample_s: float = 0.5
    # Phase 1's warm-up: windows of warm_window_s until stable (bench/warmup.py), at most warm_cap_s;
    # 0: warm_s of load, as before a phase through the proxy
    warm_cap_s: float = 0.0
    warm_window_s: float = 5.0


PROFILES = {
    "quick": Profile("quick", 15, 64, [64, 2048], 3, 10, 5, 512, 2, 35, 5, 64 * MiB, 5, 2048, 2, warm_cap_s=90),
    "full": Profile("full", 30, 64, [64, 2048], 5, 10, 10, 512, 2, 120, 10, 64 * MiB, 10, 2048, 10, warm_cap_s=120),
    # make test: one service, seconds per scenario, so that the code keeps working
    "smoke": Profile("smoke", 1, 8, [16], 1, 2, 2, 16, 0.5, 3, 1, 4 * MiB, 2, 64, 2, 2.0, 0.25),
}


@dataclass
class Config:
    profile: Profile
    targets: list[Target]
    es_url: str = "http://127.0.0.1:9250"
    city_id: int = 3  # a fixture city: every target answers it
    limits: runner.Limits | None = None
    pin: bool = True
    log_level: str = "warn"
    vegeta: str = str(runner.ROOT / ".cache" / "bin" / "vegeta")
    out: Path = runner.ROOT / "out" / "bench"
    timeout_s: int = 15
