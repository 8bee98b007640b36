"""Fixtures shared by the check groups. The runner (conformance/cli.py) sets runtime.CONFIG."""

from __future__ import annotations

import dataclasses
import re

import pytest

from conformance import rawhttp, runtime
from conformance.service import Instance, free_port


@pytest.fixture(scope="session")
def cfg() -> runtime.Config:
    if runtime.CONFIG is None:
        pytest.exit("the checks are run by the runner: python -m conformance --help", returncode=2)
    return runtime.CONFIG


class Launcher:
    """Creates service instances (service/command modes) and stops every one at the end."""

    def __init__(self, cfg: runtime.Config):
        self.cfg = cfg
        self.instances: list[Instance] = []

    def make(self, label: str, env: dict[str, str | None] | None = None, es_url: str | None = None) -> Instance:
        full = {"PORT": str(free_port()), "ELASTICSEARCH_URL": es_url or self.cfg.es_url}
        if self.cfg.tracing is not None:  # --traces: the whole suite runs with tracing on
            full.update(self.cfg.tracing.env())
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = v
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", label)
        inst = Instance(self.cfg.argv, self.cfg.cwd, full, safe, log_dir=self.cfg.out_dir / "logs")
        self.instances.append(inst)
        return inst

    def stop_all(self):
        for inst in self.instances:
            inst.stop()


@pytest.fixture(scope="session")
def launcher(cfg):
    la = Launcher(cfg)
    yield la
    la.stop_all()


@pytest.fixture(scope="session")
def need_process(cfg):
    if not cfg.manages_process:
        pytest.skip("needs --service or --command (the suite starts the process)")


@dataclasses.dataclass
class Target:
    base: tuple[str, int]
    base_url: str
    instance: Instance | None


@pytest.fixture(scope="session")
def target(cfg, launcher) -> Target:
    """The service under test: the given --base-url, or the main instance the suite starts."""
    if cfg.mode == "base-url":
        return Target(rawhttp.split_url(cfg.base_url), cfg.base_url, None)
    inst = launcher.make("main").start()
    try:
        seconds = inst.wait_ready()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    runtime.REPORT["startup (launch -> first HTTP response)"] = f"{seconds:.3f}s"
    return Target(inst.base, inst.base_url, inst)


@pytest.fixture(scope="session")
def fetch(target):
    """fetch(case) -> Response, each case sent once per run (golden and spec share the answers)."""
    cache: dict[str, object] = {}

    def fetch(case):
        if case.id not in cache:
            try:
                cache[case.id] = rawhttp.request(
                    target.base, case.method, case.target, case.send_headers, case.send_body
                )
            except rawhttp.HttpError as e:
                cache[case.id] = e
        r = cache[case.id]
        if isinstance(r, Exception):
            pytest.fail(f"{case.method} {case.short_target()}: no HTTP response: {r}", pytrace=False)
        return r

    return fetch


@pytest.fixture(scope="session")
def http(target):
    """http(method, target, **kw) -> Response against the service under test."""

    def call(method: str, tgt: str | bytes, **kw) -> rawhttp.Response:
        try:
            return rawhttp.request(target.base, method, tgt, **kw)
        except rawhttp.HttpError as e:
            pytest.fail(f"{method} {tgt!r}: no HTTP response: {e}", pytrace=False)

    return call
