"""cityref documents: the conformance fixture and the seeded benchmark dataset.

Documents keep GoOut's original shape (flat dotted `name.<lang>` keys, GeoJSON `geometry`).
Both generators yield (id, source_json) pairs ready for the bulk API.

Fixture (data/fixture/*.json): hand-curated; each document's `geometryVertices` is replaced by a
GeoJSON polygon of that many vertices around its centroid (so the files stay readable while
region 3 still carries a geometry of about 400 KB).

Benchmark dataset: `cities(n)` / `regions(n)` are deterministic for a seed. Ids start at
REGION_ID_BASE / CITY_ID_BASE so the dataset can sit beside the fixture. Names are synthesised
(Central European syllables with per-language spelling rules). Geometries have realistic sizes
(cities 10-40 KB, regions 0.5-1 MB, as in GoOut's originals) but are drawn from a pool of
pre-serialised rings, which keeps generation cheap; services never read them anyway.
"""

from __future__ import annotations

import json
import math
import pathlib
import random

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixture"
LANGUAGES = ("cs", "de", "en", "pl", "sk")
DEFAULT_CITIES, DEFAULT_REGIONS, DEFAULT_SEED = 100_000, 1_000, 2020
REGION_ID_BASE, CITY_ID_BASE = 1_000, 1_000_000
COUNTRIES = (
    ("CZ", "Europe/Prague"),
    ("SK", "Europe/Bratislava"),
    ("PL", "Europe/Warsaw"),
    ("AT", "Europe/Vienna"),
    ("DE", "Europe/Berlin"),
)


def _dumps(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def ring(lat: float, lon: float, vertices: int, radius: float, rnd: random.Random) -> str:
    """A closed GeoJSON Polygon ring (serialised) of `vertices` points around (lat, lon)."""
    points = []
    for i in range(vertices):
        a = 2 * math.pi * i / vertices
        r = radius * (0.8 + 0.4 * rnd.random())
        points.append(f"[{lon + r * math.cos(a):.6f},{lat + r * math.sin(a):.6f}]")
    points.append(points[0])
    return '{"type":"Polygon","coordinates":[[' + ",".join(points) + "]]}"


def fixture(kind: str):
    """Yields (id, source) for data/fixture/<kind>.json, expanding `geometryVertices`."""
    for doc in json.loads((FIXTURE / f"{kind}.json").read_text(encoding="utf-8")):
        vertices = doc.pop("geometryVertices", None)
        source = _dumps(doc)
        if vertices:
            c = doc["centroid"]
            geometry = ring(c["lat"], c["lon"], vertices, 0.1, random.Random(doc["id"]))
            source = source[:-1] + ',"geometry":' + geometry + "}"
        yield doc["id"], source


# --- benchmark dataset -------------------------------------------------------------------------

_ONSETS = (
    "Br",
    "Ch",
    "Dol",
    "Hor",
    "Kr",
    "Lub",
    "Mal",
    "Nov",
    "Ost",
    "Pod",
    "Roz",
    "Sl",
    "Star",
    "Tr",
    "Vel",
    "Zl",
    "Bys",
    "Kam",
    "Les",
    "Pol",
    "Rad",
    "Sv",
    "Vys",
    "Žel",
)
_MIDDLES = ("a", "e", "o", "i", "u", "ě", "á", "í", "ou", "y")
_CODAS = (
    "bor",
    "dín",
    "hrad",
    "kov",
    "lín",
    "mír",
    "nice",
    "ov",
    "štejn",
    "tín",
    "ves",
    "zín",
    "brod",
    "hora",
    "pole",
    "ec",
    "any",
    "ice",
)
_FOLD = str.maketrans("áčďéěíňóřšťúůýžÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ", "acdeeinorstuuyzACDEEINORSTUUYZ")
_GERMAN = (
    ("š", "sch"),
    ("č", "tsch"),
    ("ž", "sch"),
    ("ř", "rsch"),
    ("v", "w"),
    ("c", "z"),
    ("ou", "au"),
    ("ě", "e"),
    ("í", "i"),
    ("á", "a"),
    ("ý", "y"),
    ("ň", "n"),
)
_POLISH = (
    ("š", "sz"),
    ("č", "cz"),
    ("ř", "rz"),
    ("ž", "ż"),
    ("ě", "ie"),
    ("ou", "ó"),
    ("v", "w"),
    ("í", "i"),
    ("á", "a"),
    ("ý", "y"),
)
_SLOVAK = (("ě", "e"), ("ř", "r"), ("ů", "ô"), ("ou", "ú"))


def _respell(name: str, rules) -> str:
    for old, new in rules:
        name = name.replace(old, new).replace(old.capitalize(), new.capitalize())
    return name


def _names(rnd: random.Random, suffix: str = "") -> dict:
    cs = rnd.choice(_ONSETS) + rnd.choice(_MIDDLES) + rnd.choice(_CODAS)
    if rnd.random() < 0.3:
        cs += " nad " + rnd.choice(("Labem", "Vltavou", "Odrou", "Moravou", "Sázavou"))
    variants = {
        "cs": cs,
        "de": _respell(cs, _GERMAN),
        "en": cs.translate(_FOLD),
        "pl": _respell(cs, _POLISH),
        "sk": _respell(cs, _SLOVAK),
    }
    return {f"name.{lang}": value + suffix for lang, value in variants.items()}


def _pool(seed: int, count: int, lo: int, hi: int, radius: float) -> list[str]:
    rnd = random.Random(seed)
    return [
        ring(49.5 + rnd.uniform(-2, 2), 16.0 + rnd.uniform(-4, 4), rnd.randint(lo, hi), radius, rnd)
        for _ in range(count)
    ]


def regions(n: int = DEFAULT_REGIONS, seed: int = DEFAULT_SEED):
    rnd = random.Random(f"regions-{seed}")
    pool = _pool(seed, 16, 23_000, 45_000, 0.8)  # 0.5-1 MB each
    for i in range(n):
        iso, _ = COUNTRIES[i % len(COUNTRIES)]
        doc = {
            "id": REGION_ID_BASE + i,
            "countryIso": iso,
            "centroid": {"lat": round(rnd.uniform(46.5, 54.5), 4), "lon": round(rnd.uniform(9, 24), 4)},
        }
        doc.update(_names(rnd, " Region"))
        yield doc["id"], _dumps(doc)[:-1] + ',"geometry":' + pool[i % len(pool)] + "}"


def cities(n: int = DEFAULT_CITIES, n_regions: int = DEFAULT_REGIONS, seed: int = DEFAULT_SEED):
    rnd = random.Random(f"cities-{seed}")
    pool = _pool(seed + 1, 64, 450, 1_800, 0.05)  # 10-40 KB each
    for i in range(n):
        region = rnd.randrange(n_regions)
        iso, tz = COUNTRIES[region % len(COUNTRIES)]
        doc = {
            "id": CITY_ID_BASE + i,
            "countryIso": iso,
            "regionId": REGION_ID_BASE + region,
            "isFeatured": rnd.random() < 0.05,
            "population": int(rnd.paretovariate(1.2) * 800),
            "timezone": tz,
            "centroid": {"lat": round(rnd.uniform(46.5, 54.5), 4), "lon": round(rnd.uniform(9, 24), 4)},
        }
        doc.update(_names(rnd))
        yield doc["id"], _dumps(doc)[:-1] + ',"geometry":' + pool[rnd.randrange(len(pool))] + "}"


def city_ids(n: int = DEFAULT_CITIES) -> range:
    """The ids `cities(n)` generates (for benchmark request lists)."""
    return range(CITY_ID_BASE, CITY_ID_BASE + n)
