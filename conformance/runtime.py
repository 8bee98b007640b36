"""State shared between the runner (cli.py) and the checks it runs in-process with pytest."""

from __future__ import annotations

import dataclasses
import pathlib

from cityref_tools import resources
from conformance.observe import LogKeys, MetricNames

ROOT = resources.ROOT  # the repository root (installed: the bundle of spec/ and data/); files: resources.path()

# check group -> pytest module under conformance/checks/, in run order
GROUPS = {
    "golden": "test_golden.py",
    "spec": "test_spec.py",
    "api-docs": "test_api_docs.py",
    "metrics": "test_metrics.py",
    "schemathesis": "test_schemathesis.py",
    "backend": "test_backend.py",
    "tracing": "test_tracing.py",
    "lifecycle": "test_lifecycle.py",
}
MODULE_GROUP = {v[:-3]: k for k, v in GROUPS.items()}


@dataclasses.dataclass
class Tracing:
    """--traces: every instance the suite starts traces (the spec's OTEL_* variables) into a trace
    backend that takes OTLP over HTTP at ``otlp_url`` and answers Jaeger's query API at ``query_url``."""

    query_url: str
    otlp_url: str
    service_name: str  # OTEL_SERVICE_NAME of every instance of this run (unique per run)

    def env(self) -> dict[str, str]:
        return {
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.otlp_url,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": self.service_name,
            # export within a fraction of a second, so that the checks read spans back quickly
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }


@dataclasses.dataclass
class Config:
    mode: str  # base-url | service | command
    es_url: str
    out_dir: pathlib.Path
    groups: list[str]
    name: str | None = None  # implementation name (known failures)
    base_url: str | None = None  # base-url mode
    argv: list[str] | None = None  # service / command mode
    cwd: pathlib.Path = ROOT
    known: dict[str, str] = dataclasses.field(default_factory=dict)
    seed: int = 20240601
    max_examples: int = 50
    backend_timeout_ms: int = 1000
    tracing: Tracing | None = None  # --traces: every instance traces into this backend
    logs: LogKeys = dataclasses.field(default_factory=LogKeys)  # its log lines' keys (descriptor `logs`)
    metrics: MetricNames = dataclasses.field(default_factory=MetricNames)  # its histogram (descriptor `metrics`)

    @property
    def manages_process(self) -> bool:
        return self.mode in ("service", "command")


CONFIG: Config | None = None
# facts reported at the end (startup time, ...): label -> text
REPORT: dict[str, str] = {}
