"""Creates the cityref indices from spec/elasticsearch/ and loads documents with the bulk API.

    python data/load.py [--es-url URL] fixture
        the hand-curated conformance fixture (data/fixture/*.json); idempotent (indexes by id)
    python data/load.py [--es-url URL] bench [--cities 100000] [--regions 1000] [--seed 2020]
        the deterministic, seeded benchmark dataset (data/dataset.py); ids do not overlap the fixture
    python data/load.py [--es-url URL] delete
        drops both indices (and with them the aliases)

Standard library only, so it runs anywhere Python 3.9+ does.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "data"), str(ROOT)]
import dataset  # noqa: E402

from cityref_tools import elasticsearch  # noqa: E402

INDICES = {"city": "city_v1", "region": "region_v1"}


def request(es: str, method: str, path: str, body: bytes | None = None, ndjson: bool = False):
    return elasticsearch.call(es, method, path, body, ndjson=ndjson, timeout=300)


def ensure_indices(es: str) -> None:
    for alias, index in INDICES.items():
        status, _ = request(es, "GET", f"/{index}/_mapping")
        if status == 200:
            continue
        body = (ROOT / "spec/elasticsearch" / f"{index}.json").read_bytes()
        status, answer = request(es, "PUT", f"/{index}", body)
        if status != 200:
            sys.exit(f"creating index {index} failed: {status} {answer}")
        print(f"created index {index} (alias {alias})", flush=True)


def bulk(es: str, index: str, docs, label: str, batch_bytes: int = 8 << 20) -> int:
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
            sys.exit(f"bulk load into {index} failed: {status} {json.dumps(first)[:500]}")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--es-url", default="http://127.0.0.1:9250")
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("fixture")
    bench = sub.add_parser("bench")
    bench.add_argument("--cities", type=int, default=dataset.DEFAULT_CITIES)
    bench.add_argument("--regions", type=int, default=dataset.DEFAULT_REGIONS)
    bench.add_argument("--seed", type=int, default=dataset.DEFAULT_SEED)
    sub.add_parser("delete")
    args = parser.parse_args()
    es = args.es_url.rstrip("/")

    if args.what == "delete":
        for index in INDICES.values():
            print(index, request(es, "DELETE", f"/{index}")[0])
        return
    ensure_indices(es)
    if args.what == "fixture":
        bulk(es, "region_v1", dataset.fixture("regions"), "fixture regions")
        bulk(es, "city_v1", dataset.fixture("cities"), "fixture cities")
    else:
        bulk(es, "region_v1", dataset.regions(args.regions, args.seed), "bench regions")
        bulk(es, "city_v1", dataset.cities(args.cities, args.regions, args.seed), "bench cities")
    refresh(es)


if __name__ == "__main__":
    main()
