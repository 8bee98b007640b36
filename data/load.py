"""Creates the cityref indices from spec/elasticsearch/ and loads documents with the bulk API.

    python data/load.py [--es-url URL] fixture
        the hand-curated conformance fixture (data/fixture/*.json); idempotent (indexes by id)
    python data/load.py [--es-url URL] bench [--cities 100000] [--regions 1000] [--seed 2020]
        the deterministic, seeded benchmark dataset (data/dataset.py); ids do not overlap the fixture
    python data/load.py [--es-url URL] delete
        drops both indices (and with them the aliases)

The work is done by cityref_tools/esdata.py (shared with `cityref-conformance load-fixture`).
Standard library only, so it runs anywhere Python 3.9+ does.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "data"), str(ROOT)]
import dataset  # noqa: E402

from cityref_tools import esdata  # noqa: E402


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

    try:
        if args.what == "delete":
            esdata.delete(es)
        elif args.what == "fixture":
            esdata.load_fixture(es)
        else:
            esdata.ensure_indices(es)
            esdata.bulk(es, "region_v1", dataset.regions(args.regions, args.seed), "bench regions")
            esdata.bulk(es, "city_v1", dataset.cities(args.cities, args.regions, args.seed), "bench cities")
            esdata.refresh(es)
    except esdata.LoadError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
