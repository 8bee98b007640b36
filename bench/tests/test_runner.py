import resource
from dataclasses import replace
from pathlib import Path

import pytest

from bench import cli, load, runner
from bench.targets import Meter, Running, Target
from cityref_tools import descriptors
from cityref_tools.cgroup import Sample


def test_quick_profile_reaches_2048_connections() -> None:
    quick, full = runner.PROFILES["quick"], runner.PROFILES["full"]
    assert quick.connections == [1, 4, 16, 64, 256, 1024, 2048]
    assert full.connections[-1] == 2048
    for p in (quick, full):
        assert p.fixed_connections == 64 and p.fixed_connections in p.connections
        assert p.stable_connections == 64 and p.stable_tolerance == 0.05
        assert cli.profile_problem(p) is None
    assert (quick.stable_window_s, quick.stable_cap_s) == (5, 90)
    assert full.stable_cap_s == 120
    assert cli.profile_problem(runner.PROFILES["smoke"]) is None


def test_wrk_has_threads_for_2048_connections() -> None:
    argv = load.wrk_command("http://x/", 2048, 8)
    assert "-c2048" in argv and "-t4" in argv


def test_profile_problems() -> None:
    quick = runner.PROFILES["quick"]
    assert "not one of the measured steps" in cli.profile_problem(replace(quick, fixed_connections=32))
    assert "two groups of 3 windows" in cli.profile_problem(replace(quick, stable_cap_s=25))
    assert "2 or more" in cli.profile_problem(replace(quick, stable_agreeing=1))
    assert "positive" in cli.profile_problem(replace(quick, stable_tolerance=0))
    assert cli.profile_problem(replace(quick, stable_connections=0, stable_cap_s=0)) is None


def test_cli_overrides() -> None:
    a = cli.parser().parse_args(
        [
            "--no-bare",
            "--no-images",
            "--no-floor",
            "--no-ceiling",
            "--connections",
            "8,32",
            "--fixed-connections",
            "32",
            "--stable-connections",
            "16",
            "--stable-window",
            "2",
            "--stable-cap",
            "20",
            "--stable-tolerance",
            "0.05",
        ]
    )
    p = cli.config(a).profile
    assert (p.connections, p.fixed_connections, p.stable_connections) == ([8, 32], 32, 16)
    assert (p.stable_window_s, p.stable_cap_s, p.stable_tolerance) == (2, 20, 0.05)
    with pytest.raises(SystemExit, match="fixed-connections 64"):
        cli.config(
            cli.parser().parse_args(["--no-bare", "--no-images", "--no-floor", "--no-ceiling", "--connections", "8,32"])
        )


def test_raise_nofile() -> None:
    calls = []

    def set_(which, limits):
        calls.append(limits)

    assert runner.raise_nofile(3072, get=lambda _: (1024, 20000), set_=set_) == 20000
    assert calls == [(20000, 20000)]
    calls.clear()
    assert runner.raise_nofile(3072, get=lambda _: (1024, 2048), set_=set_) == 3072
    assert calls == [(3072, 3072)]

    def refuse(which, limits):
        raise ValueError("not allowed")

    with pytest.raises(SystemExit, match="2048 connections need 3072 open files"):
        runner.raise_nofile(3072, get=lambda _: (1024, 2048), set_=refuse)
    assert runner.raise_nofile(3072, get=lambda _: (resource.RLIM_INFINITY,) * 2, set_=refuse) == resource.RLIM_INFINITY


class CountingMeter(Meter):
    """A cgroup whose CPU the fake wrk below advances by the step's requests x the CPU per request given."""

    def __init__(self) -> None:
        self.cpu_ns = 0
        self.usage = 2**20  # grows by 10 kB per connection of the last step (the fake wrk sets it)

    def sample(self) -> Sample:
        return Sample(self.cpu_ns, self.usage, 2**21, 0, 0, 0)

    def working_set(self, usage: int) -> int:
        return usage - 2**18  # 256 KiB of inactive file cache


def fake_load(meter: CountingMeter | None, cpu_us: list[float]):
    costs = iter(cpu_us)

    def run_wrk(url, connections, seconds, env, cpus, timeout_s=15):
        ok = int(1000 * seconds)
        if meter is not None:
            meter.cpu_ns += int(ok * next(costs) * 1000)
            meter.usage = 2**20 + connections * 10_000
        return {
            "duration_s": seconds,
            "responses": ok,
            "successes": ok,
            "status_errors": 0,
            "socket_errors": 0,
            "errors_detail": {},
            "bytes": 0,
            "latency_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99_9": 4.0, "mean": 1.0, "max": 5.0},
        }

    return run_wrk


def target(kind: str, meter: Meter) -> Target:
    def start(env, first_path):
        return Running(
            "http://127.0.0.1:1",
            "/city/v1/get?id=%s&language=en",
            meter,
            0.1 if kind != "ceiling" else None,
            lambda: None,
        )

    return Target(f"fake {kind}", kind, False, start)


def bench(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str, meter: Meter, cpu_us: list[float], **profile
) -> dict:
    p = replace(
        runner.PROFILES["quick"],
        connections=[4, 64, 2048],
        step_s=1,
        stable_window_s=1,
        stable_cap_s=10,
        warmup=[1, 1],
        warmup_s=1,
        pause_s=0,
        **profile,
    )
    monkeypatch.setattr(runner.load, "run_wrk", fake_load(meter if isinstance(meter, CountingMeter) else None, cpu_us))
    cfg = runner.Config(profile=p, targets=[], verify=False, open_loop=False, out=tmp_path)
    progress = runner.Progress(1, 10)
    progress.show = lambda *a: None
    return runner.bench_target(cfg, target(kind, meter), 0, None, None, None, 1, tmp_path, progress)


def test_bench_target_warms_up_until_stable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    windows = [300, 150, 110, 101, 100, 100, 100, 100]  # medians 101 → 100 of the last two groups of 3: settled
    costs = windows + [100, 100, 100, 40]  # the steps, then the framework-only step
    rec = bench(monkeypatch, tmp_path, "bare", CountingMeter(), costs)
    assert rec["status"] == "ok", rec["reason"]
    w = rec["warmup"]
    assert w["mode"] == "stable" and w["converged"] and w["windows"] == 8 and w["seconds"] == 8
    assert w["steady_after_s"] == 8 and w["window_cpu_us_per_request"] == pytest.approx(windows)
    kinds = [(s["kind"], s["connections"]) for s in rec["steps"]]
    assert kinds == [("warmup", 64)] * 8 + [("step", 4), ("step", 64), ("step", 2048), ("framework", 64)]
    assert rec["totals"]["at_fixed"]["cpu_us_per_request"] == pytest.approx(100)
    assert rec["totals"]["framework_only"]["cpu_us_per_request"] == pytest.approx(40)
    over = rec["totals"]["overload"]
    assert over["connections"] == 2048
    assert rec["memory_after_startup_working_set_bytes"] == 2**20 - 2**18
    assert over["memory_working_set_bytes"] == 2**20 + 2048 * 10_000 - 2**18
    assert over["memory_per_connection_bytes"] == pytest.approx(10_000)
    # the whole run counts the warm-up, not the framework-only step: (8 windows + 3 steps) x 1000 requests
    cpu_s = (sum(windows) + 3 * 100) * 1000 / 1e6
    assert rec["totals"]["requests_per_cpu_s"] == pytest.approx(11000 / cpu_s, rel=1e-3)


def test_bench_target_caps_the_warm_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rec = bench(monkeypatch, tmp_path, "bare", CountingMeter(), [100 * 0.9**i for i in range(10)] + [50] * 4)
    w = rec["warmup"]
    assert w["capped"] and not w["converged"] and w["windows"] == 10 and w["seconds"] == 10
    assert w["steady_after_s"] is None


def test_targets_without_cpu_figures_get_the_fixed_warm_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rec = bench(monkeypatch, tmp_path, "url", Meter(), [])
    w = rec["warmup"]
    assert w["mode"] == "fixed" and w["connections"] == [1, 1] and w["seconds"] == 2
    assert [s["connections"] for s in rec["steps"] if s["kind"] == "warmup"] == [1, 1]
    assert rec["totals"]["at_fixed"]["rps"] == 1000 and rec["totals"]["at_fixed"]["cpu_us_per_request"] is None


def test_stable_warm_up_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rec = bench(monkeypatch, tmp_path, "bare", CountingMeter(), [100] * 5, stable_connections=0)
    assert rec["warmup"]["mode"] == "fixed" and rec["warmup"]["why"] == "stability warm-up turned off"


def test_the_gate_reads_failures_from_junit_xml(tmp_path):
    xml = tmp_path / "junit.xml"
    xml.write_text(
        '<testsuites><testsuite name="s">'
        '<testcase name="test_golden[a]"><properties><property name="check" value="golden/a"/></properties></testcase>'
        '<testcase name="test_golden[b]"><properties><property name="check" value="golden/b"/></properties>'
        '<failure message="AssertionError: status 500, expected 200&#10;more">trace</failure></testcase>'
        '<testcase name="test_golden[c]"><error message="boom">trace</error></testcase>'
        "</testsuite></testsuites>"
    )
    assert runner.junit_failures(xml) == ["golden/b: AssertionError: status 500, expected 200", "test_golden[c]: boom"]
    assert runner.junit_failures(tmp_path / "missing.xml") == []


def test_each_jvm_image_also_runs_without_its_aot_cache() -> None:
    names = lambda argv: [t.name for t in cli.build_targets(cli.parser().parse_args(argv), "elasticsearch")]  # noqa: E731
    everything = names(["--no-bare", "--no-floor", "--no-ceiling"])
    services = descriptors.all_services()
    for jvm in [d["name"] for d in services if descriptors.runs_on_jvm(d)]:
        assert f"{jvm} (image)" in everything and f"{jvm} (image, no AOT)" in everything
    for native in [d["name"] for d in services if not descriptors.runs_on_jvm(d)]:
        assert f"{native} (image)" in everything and f"{native} (image, no AOT)" not in everything
    assert not [n for n in names(["--no-bare", "--no-aot-variants"]) if "no AOT" in n]
    assert names(["--no-bare", "--no-images", "--no-floor", "--no-ceiling"]) == []


def block_target(name: str, meter: CountingMeter, alive=lambda: True, evidence=dict) -> Target:
    def start(env, first_path):
        path = "/city/v1/get?id=%s&language=en"
        return Running("http://127.0.0.1:1", path, meter, 0.1, lambda: None, alive=alive, evidence=evidence)

    return Target(name, "bare", False, start, {"service": name})


def block_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, targets: list[Target], meters: dict) -> dict:
    """Two blocks of 3 rounds with fake wrk and vegeta: each step costs its target the CPU its meter is told."""
    p = replace(
        runner.PROFILES["smoke"], connections=[4, 64], fixed_connections=4, stable_connections=0, warmup=[1], pause_s=0
    )
    visits: list[str] = []

    def run_wrk(url, connections, seconds, env, cpus, timeout_s=15):
        port = url.split(":")[2].split("/")[0]
        visits.append(port)
        return fake_load(None, [])(url, connections, seconds, env, cpus, timeout_s)

    def run_vegeta(vegeta, urls, rate, seconds, cpus, workdir, timeout_s=15, connections=None):
        out = fake_load(None, [])(urls[0], connections, seconds, {}, cpus)
        out.update(successes=int(rate * seconds), target_rate=rate, max_connections=connections)
        return out

    monkeypatch.setattr(runner.load, "run_wrk", run_wrk)
    monkeypatch.setattr(runner.load, "run_vegeta", run_vegeta)
    cfg = runner.Config(profile=p, targets=targets, verify=False, open_loop=False, out=tmp_path)
    progress = runner.Progress(2, 10)
    progress.show = lambda *a: None
    progress.message = lambda *a: None
    recs = []
    for block in range(p.blocks):
        recs += runner.bench_block(cfg, [(t, None) for t in targets], block, None, None, 1, tmp_path, progress)
    return {"recs": recs, "visits": visits, "profile": p}


class PerTargetMeter(CountingMeter):
    """CPU that grows by a fixed amount at every sample: each step (two samples) costs `cost_us` ms."""

    def __init__(self, cost_us: float) -> None:
        super().__init__()
        self.cost_us = cost_us

    def sample(self) -> Sample:
        self.cpu_ns += int(self.cost_us * 1000 * 1000)
        return super().sample()


def test_a_block_visits_every_target_once_per_round_in_a_seeded_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    meters = {n: PerTargetMeter(c) for n, c in (("a", 50), ("b", 80))}
    targets = [block_target(n, m) for n, m in meters.items()]
    run = block_run(monkeypatch, tmp_path, targets, meters)
    recs = run["recs"]
    firsts = [(r["target"], r["repeat"], r["status"]) for r in recs if r["target"] == "a"]
    assert firsts == [("a", 0, "ok"), ("a", 1, "ok")]
    for r in recs:
        rounds = [s for s in r["steps"] if s["kind"] == "round"]
        rates = [s for s in r["steps"] if s["kind"] == "rate"]
        assert [s["round"] for s in rounds] == [0, 1, 2] and [s["round"] for s in rates] == [0, 1, 2]
        assert all(s["rate"] == 100 and s["max_connections"] == 8 for s in rates)
        # then the start's remaining step (64 connections) and the framework-only one, once
        assert [s["kind"] for s in r["steps"]][-2:] == ["step", "framework"]
        assert r["totals"]["at_fixed"]["connections"] == 4 and r["totals"]["at_fixed"]["settled"]
    again = block_run(monkeypatch, tmp_path, [block_target(n, PerTargetMeter(1)) for n in meters], meters)
    positions = [[s["position"] for s in r["steps"] if s["kind"] == "round"] for r in recs]
    assert positions == [[s["position"] for s in r["steps"] if s["kind"] == "round"] for r in again["recs"]]
    assert any(p != positions[0] for p in positions)  # the order changes between rounds or blocks


def test_a_target_that_dies_in_a_round_is_recorded_with_its_evidence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    state = {"visits": 0}
    meter = PerTargetMeter(50)

    def alive() -> bool:
        state["visits"] += 1
        return state["visits"] <= 2

    evidence = {"exit_code": 137, "oom_killed": True, "oom_kills": 1, "log_tail": ["Terminating"], "source": "test"}
    dying = block_target("dies", meter, alive=alive, evidence=lambda: evidence)
    run = block_run(monkeypatch, tmp_path, [dying, block_target("lives", PerTargetMeter(60))], {})
    first = next(r for r in run["recs"] if r["target"] == "dies")
    assert first["status"] == "died" and "exit 137 (killed for memory)" in first["reason"]
    assert first["death"]["log_tail"] == ["Terminating"] and first["death"]["during"].startswith("round")
    assert len([s for s in first["steps"] if s["kind"] == "round"]) < 3
    assert all(r["status"] == "ok" for r in run["recs"] if r["target"] == "lives")
    assert cli.check_ranking({"ranking": None, "profile": run["profile"], "results": run["recs"]}) == [
        "no ranking (the block method's rounds are missing)"
    ]


def test_the_resilience_run_builds_its_targets_without_the_main_runs_choices() -> None:
    a = cli.resilience_parser().parse_args(["--services", "rust-actix", "--no-images"])
    a.no_aot_variants, a.image, a.url, a.no_floor, a.no_ceiling = True, [], [], True, True  # as resilience_main
    names = [t.name for t in cli.build_targets(a, "Elasticsearch")]
    assert "rust-actix" in names and not any("A/A" in n for n in names)


def test_the_publish_profile_ranks_the_images_with_an_aa_twin() -> None:
    a = cli.parser().parse_args(["--profile", "publish", "--services", "java-helidon,go-kit"])
    targets = cli.config(a).targets
    names = [t.name for t in targets]
    helidon = names.index("java-helidon (image)")
    assert names[helidon + 1] == "java-helidon (image, A/A twin)" and "go-kit (image)" in names
    assert not any(t.kind == "bare" for t in targets) and not any("no AOT" in n for n in names)
    twin = next(t for t in targets if "A/A" in t.name)
    assert twin.meta["aa_of"] == "java-helidon (image)"
    smoke = cli.parser().parse_args(
        ["--profile", "smoke", "--services", "rust-actix", "--aa", "rust-actix", "--no-images"]
    )
    assert [t.name for t in cli.config(smoke).targets][:2] == ["rust-actix", "rust-actix (A/A twin)"]
