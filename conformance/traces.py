"""Reading traces back from a trace backend through Jaeger's query API (``GET /api/traces/<id>``),
and W3C trace context (``traceparent``) as the suite sends and reads it."""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import time
import urllib.error
import urllib.request

TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


@dataclasses.dataclass(frozen=True)
class Context:
    trace_id: str
    span_id: str
    sampled: bool

    @classmethod
    def new(cls, sampled: bool = True) -> Context:
        return cls(secrets.token_hex(16), secrets.token_hex(8), sampled)

    @property
    def header(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-{'01' if self.sampled else '00'}"

    @classmethod
    def parse(cls, value: str | None) -> Context | None:
        m = TRACEPARENT.match((value or "").strip())
        if not m:
            return None
        return cls(m[1], m[2], int(m[3], 16) & 1 == 1)


@dataclasses.dataclass
class Span:
    span_id: str
    parent_id: str | None  # the CHILD_OF reference's span id, None for a root span
    name: str
    kind: str  # server | client | internal | ...
    service: str
    tags: dict[str, object]

    def describe(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" for k, v in sorted(self.tags.items()) if not k.startswith("otel."))
        return f"{self.kind} {self.name!r} id={self.span_id} parent={self.parent_id} [{attrs}]"


def fetch_trace(query_url: str, trace_id: str) -> list[Span]:
    """The trace's spans as the backend holds them now ([] when it has none)."""
    try:
        with urllib.request.urlopen(f"{query_url}/api/traces/{trace_id}", timeout=5) as r:
            doc = json.load(r)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return []
        raise
    spans = []
    for trace in doc.get("data") or []:
        processes = {k: p.get("serviceName", "") for k, p in (trace.get("processes") or {}).items()}
        for s in trace.get("spans") or []:
            tags = {t["key"]: t.get("value") for t in s.get("tags") or []}
            parent = next((r["spanID"] for r in s.get("references") or [] if r.get("refType") == "CHILD_OF"), None)
            spans.append(
                Span(
                    span_id=s["spanID"],
                    parent_id=parent,
                    name=s.get("operationName", ""),
                    kind=str(tags.get("span.kind", "internal")),
                    service=processes.get(s.get("processID", ""), ""),
                    tags=tags,
                )
            )
    return spans


def wait_trace(query_url: str, trace_id: str, until, timeout: float = 20.0) -> list[Span]:
    """Polls the backend until ``until(spans)`` holds or ``timeout`` passes; returns the last spans
    seen (exporters batch, so spans arrive some time after the answer)."""
    deadline = time.monotonic() + timeout
    while True:
        spans = fetch_trace(query_url, trace_id)
        if until(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.25)


def backend_ready(query_url: str) -> str | None:
    """None if the query API answers, else why not."""
    try:
        with urllib.request.urlopen(f"{query_url}/api/services", timeout=5) as r:
            json.load(r)
        return None
    except (OSError, ValueError) as e:
        return f"no trace backend query API at {query_url}: {e}"
