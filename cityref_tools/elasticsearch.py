"""Talking to Elasticsearch over its REST API (standard library only): requests, and whether it is
up and holds the cityref data."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


def call(
    es: str, method: str, path: str, body: bytes | dict | None = None, ndjson: bool = False, timeout: float = 60
) -> tuple[int, Any]:
    """(status, parsed JSON answer) of one request; an HTTP error status is returned, not raised.
    OSError (urllib.error.URLError) when Elasticsearch cannot be reached."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    req = urllib.request.Request(es.rstrip("/") + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/x-ndjson" if ndjson else "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw or b"null")
        except ValueError:
            return e.code, raw.decode("utf-8", "replace")


def get(es: str, path: str, body: dict | None = None, timeout: float = 60) -> dict:
    """The JSON answer of GET (POST with a body); OSError on any failure or non-2xx status."""
    status, answer = call(es, "POST" if body is not None else "GET", path, body, timeout=timeout)
    if not 200 <= status < 300:
        raise OSError(f"{path}: HTTP {status} {str(answer)[:200]}")
    return answer


def problem(es: str, city_id: int | None = None, timeout: float = 10) -> str | None:
    """None when Elasticsearch answers /_cluster/health (and, with ``city_id``, holds that city),
    else what is wrong."""
    try:
        get(es, "/_cluster/health", timeout=timeout)
        if city_id is not None and not get(es, f"/city/_doc/{city_id}?_source_includes=id", timeout=timeout).get(
            "found"
        ):
            return f"city {city_id} is missing (load the data first)"
    except (OSError, ValueError) as e:
        return str(getattr(e, "reason", None) or e)  # URLError: the reason, without "<urlopen error …>"
    return None


def wait_for_status(
    es: str, seconds: float, wanted: tuple[str, ...], stop: Callable[[], str | None] | None = None
) -> str | None:
    """None once /_cluster/health reports one of ``wanted`` (lowest first, e.g. ("yellow", "green")),
    asking at least once and then every second for up to ``seconds``; else why not: what ``stop``
    returned (a reason to give up early, asked before each try), or the last problem seen."""
    deadline = time.monotonic() + seconds
    while True:
        reason = stop() if stop else None
        if reason:
            return reason
        try:
            health = get(es, f"/_cluster/health?wait_for_status={wanted[0]}&timeout=1s", timeout=5)
            if health.get("status") in wanted:
                return None
            problem = f"cluster status {health.get('status')}"
        except (OSError, ValueError) as e:
            problem = str(e)
        if time.monotonic() >= deadline:
            return f"not {' or '.join(wanted)} after {seconds:g} s ({problem})"
        time.sleep(1)
