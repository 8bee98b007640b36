"""The suite's own oracle: what the spec says a service answers for a fixture city.

Computed from ``data/fixture/*.json`` with the rules of ``spec/openapi.yaml`` (section
"Elasticsearch"), independently of any service:

* checks in order: city found (404), city well-formed (500), city name in the language (500),
  region found (500), region name in the language (500);
* a city needs ``countryIso`` (string), ``isFeatured`` (boolean), ``regionId`` (integer) and ``id``
  (integer); a name is missing when its key is absent, ``null`` or ``""``;
* the 200 body is ``City`` with keys in schema order, compact JSON, non-ASCII literal.
"""

from __future__ import annotations

import json

from cityref_tools import resources

FIXTURE = resources.path("data/fixture")
LANGUAGES = ("cs", "de", "en", "pl", "sk")


def compact(obj) -> bytes:
    """The spec's wire format: UTF-8, no whitespace, non-ASCII written literally."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def error_body(message: str) -> bytes:
    return compact({"message": message})


def load(name: str) -> list[dict]:
    return json.loads((FIXTURE / name).read_text(encoding="utf-8"))


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _name(doc: dict, language: str):
    value = doc.get(f"name.{language}")
    return None if value is None or value == "" else value


def expected(city_id: int, language: str, cities: list[dict], regions: list[dict]) -> tuple[int, bytes]:
    """(status, body) the spec requires for GET /city/v1/get?id=<city_id>&language=<language>."""
    by_id = {c.get("id"): c for c in cities}
    regions_by_id = {r.get("id"): r for r in regions}
    city = by_id.get(city_id)
    if city is None:
        return 404, error_body(f"Not Found: City#{city_id} not found.")
    well_formed = (
        isinstance(city.get("countryIso"), str)
        and isinstance(city.get("isFeatured"), bool)
        and _is_int(city.get("regionId"))
        and _is_int(city.get("id"))
    )
    if not well_formed:
        return 500, error_body(f"Internal Server Error: City#{city_id} is malformed.")
    name = _name(city, language)
    if name is None:
        return 500, error_body(f"Internal Server Error: City#{city_id} has no name in '{language}'.")
    region_id = city["regionId"]
    region = regions_by_id.get(region_id)
    if region is None:
        return 500, error_body(f"Internal Server Error: Region#{region_id} of City#{city_id} not found.")
    region_name = _name(region, language)
    if region_name is None:
        return 500, error_body(f"Internal Server Error: Region#{region_id} has no name in '{language}'.")
    return 200, compact(
        {
            "countryIso": city["countryIso"],
            "id": city["id"],
            "isFeatured": city["isFeatured"],
            "name": name,
            "regionName": region_name,
        }
    )


def fixture_expectations() -> list[tuple[int, str, int, bytes]]:
    """(city id, language, status, body) for every fixture city in every language."""
    cities, regions = load("cities.json"), load("regions.json")
    return [(c["id"], lang, *expected(c["id"], lang, cities, regions)) for c in cities for lang in LANGUAGES]
