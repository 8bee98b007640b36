"""The cityref indices and documents in Elasticsearch: create the indices from spec/elasticsearch/,
bulk-load documents, refresh; and the whole fixture load (``load_fixture``).

Used by data/load.py (fixture, bench dataset) and by ``cityref-conformance load-fixture``. The
documents themselves come from data/dataset.py (the fixture's ``geometryVertices`` are expanded
there), found through cityref_tools.resources so that the installed distribution, which bundles
that file, loads exactly what a checkout loads. Standard library only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import types
from collections.abc import Callable, Iterable

from cityref_tools import elasticsearch, resources

INDICES = {"city": "city_v1", "region": "region_v1"}  # alias -> index


class LoadError(RuntimeError):
    """Elasticsearch refused an index or a document."""


def request(es: str, method: str, path: str, body: bytes | None = None, ndjson: bool = False):
    return elasticsearch.call(es, method, path, body, ndjson=ndjson, timeout=300)


def dataset() -> types.ModuleType:
    """data/dataset.py (the fixture's and the benchmark's documents), loaded once."""
    module = sys.modules.get("cityref_dataset")
    if module is None:
        spec = importlib.util.spec_from_file_location("cityref_dataset", resources.path("data/dataset.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["cityref_dataset"] = module
        spec.loader.exec_module(module)
    return module


def ensure_indices(es: str, say: Callable[[str], None] = print) -> None:
    """Creates city_v1 and region_v1 (with their aliases) from spec/elasticsearch/ unless they exist."""
    for alias, index in INDICES.items():
        status, _ = request(es, "GET", f"/{index}/_mapping")
        if status == 200:
            continue
        body = resources.path(f"spec/elasticsearch/{index}.json").read_bytes()
        status, answer = request(es, "PUT", f"/{index}", body)
        if status != 200:
            raise LoadError(f"creating index {index} failed: {status} {answer}")
        say(f"created index {index} (alias {alias})")


def bulk(es: str, index: str, docs: Iterable[tuple], label: str, batch_bytes: int = 8 << 20) -> int:
    """Indexes (id, source_json) pairs in batches of about batch_bytes; shows progress."""
    total, lines, size, t0 = 0, [], 0, time.monotonic()
    last = [t0]

    def flush():
        nonlocal lines, size
        if not lines:
            return
        status, answer = request(es, "POST", f"/{index}/_bulk", "".join(lines).encode(), ndjson=True)
        if status != 200 or answer.get("errors"):
            first = next((i for i in answer.get("items", []) if "error" in i.get("index", {})), answer)
            raise LoadError(f"bulk load into {index} failed: {status} {json.dumps(first)[:500]}")
        lines, size = [], 0
        rate = total / max(time.monotonic() - t0, 1e-9)
        if sys.stdout.isatty():
            print(f"\r{label}: {total} documents ({rate:,.0f}/s)", end="", flush=True)
        elif time.monotonic() - last[0] > 10:
            last[0] = time.monotonic()
            print(f"{label}: {total} documents ({rate:,.0f}/s)", flush=True)

    for doc_id, source in docs:
        action = '{"index":{"_id":"' + str(doc_id) + '"}}'
        lines += [action, "\n", source, "\n"]
        size += len(source) + len(action) + 2
        total += 1
        if size >= batch_bytes:
            flush()
    flush()
    print(f"\r{label}: {total} documents in {time.monotonic() - t0:.1f} s", flush=True)
    return total


def refresh(es: str) -> None:
    for index in INDICES.values():
        request(es, "POST", f"/{index}/_refresh")


def delete(es: str) -> None:
    """Drops both indices (and with them the aliases)."""
    for index in INDICES.values():
        print(index, request(es, "DELETE", f"/{index}")[0])


def load_fixture(es: str) -> int:
    """Creates the indices if needed and indexes the fixture (data/fixture/*.json) by id: idempotent.
    The number of documents indexed; LoadError or OSError (Elasticsearch unreachable) on failure."""
    es = es.rstrip("/")
    ensure_indices(es)
    ds = dataset()
    n = bulk(es, INDICES["region"], ds.fixture("regions"), "fixture regions")
    n += bulk(es, INDICES["city"], ds.fixture("cities"), "fixture cities")
    refresh(es)
    return n
