"""Case loading: the YAML format, generated cases, and hand-written cases agreeing with the oracle."""

import json

import pytest

from conformance import cases, fixture
from conformance.cases import CaseError, build_target, load_cases


@pytest.fixture(scope="module")
def all_cases():
    return load_cases()


def test_ids_unique_and_count(all_cases):
    ids = [c.id for c in all_cases]
    assert len(ids) == len(set(ids))
    assert len([c for c in all_cases if c.source == "fixture"]) == 21 * 5


def test_targets_are_ascii_and_rooted(all_cases):
    for c in all_cases:
        assert c.target.startswith(b"/")
        assert all(0x20 < b < 0x7F for b in c.target), c.id


def test_padded_targets_exact_length():
    assert len(build_target({"prefix": "/x?p=", "length": 8193})) == 8193
    assert build_target({"prefix": "/x?", "length": 6, "fill": "b"}) == b"/x?bbb"
    with pytest.raises(CaseError):
        build_target({"prefix": "/too-long", "length": 3})
    with pytest.raises(CaseError):
        build_target("/caf\u00e9")


def test_error_bodies_are_compact_json(all_cases):
    for c in all_cases:
        if c.status >= 400 and c.body:
            obj = json.loads(c.body)
            assert list(obj) == ["message"], c.id
            assert fixture.compact(obj) == c.body, c.id


def test_head_twins(all_cases):
    by_id = {c.id: c for c in all_cases}
    twins = [c for c in all_cases if c.head_of]
    assert twins
    for t in twins:
        g = by_id[t.head_of]
        assert t.method == "HEAD" and t.body == b"" and t.status == g.status
        if not g.volatile:
            assert t.headers["Content-Length"] == str(len(g.body))
    assert "path-root.head" not in by_id  # unknown paths get no twin
    assert "metrics.head" in by_id and "Content-Length" not in by_id["metrics.head"].headers


def test_hand_written_city_cases_agree_with_the_oracle(all_cases):
    """Literal 200/404/500 bodies in cases.yaml match what the fixture oracle computes."""
    cities, regions = fixture.load("cities.json"), fixture.load("regions.json")
    checked = 0
    for c in all_cases:
        if c.source != "cases.yaml" or not c.target.startswith(b"/city/v1/get?") or c.status not in (200, 404, 500):
            continue
        params = dict(p.split("=", 1) for p in c.target.decode().split("?", 1)[1].split("&") if "=" in p)
        if not params.get("id", "").isdigit() or params.get("language") not in fixture.LANGUAGES:
            continue
        assert (c.status, c.body) == fixture.expected(int(params["id"]), params["language"], cities, regions), c.id
        checked += 1
    assert checked >= 10


def test_oracle_rules():
    cities = [
        {"id": 1, "countryIso": "CZ", "regionId": 1, "isFeatured": True, "name.en": "A", "name.de": ""},
        {"id": 2, "countryIso": "CZ", "regionId": True, "isFeatured": True, "name.en": "B"},
        {"id": 3, "countryIso": "CZ", "regionId": 5, "isFeatured": False, "name.en": "C"},
    ]
    regions = [{"id": 1, "name.en": "R", "name.pl": None}]
    assert fixture.expected(1, "en", cities, regions) == (
        200,
        b'{"countryIso":"CZ","id":1,"isFeatured":true,"name":"A","regionName":"R"}',
    )
    assert (
        fixture.expected(1, "de", cities, regions)[1]
        == b'{"message":"Internal Server Error: City#1 has no name in \'de\'."}'
    )
    assert fixture.expected(2, "en", cities, regions)[1] == b'{"message":"Internal Server Error: City#2 is malformed."}'
    assert (
        fixture.expected(3, "en", cities, regions)[1]
        == b'{"message":"Internal Server Error: Region#5 of City#3 not found."}'
    )
    assert fixture.expected(9, "en", cities, regions)[0] == 404


def test_bad_case_rejected(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("cases:\n  - {id: x, target: /a, status: 200, body: a, json: {}}\n")
    with pytest.raises(CaseError):
        cases.load_cases(f)
    f.write_text("cases:\n  - {id: x, target: /a, status: 200, surprise: 1}\n")
    with pytest.raises(CaseError):
        cases.load_cases(f)
    f.write_text("cases:\n  - {id: x, target: /a, status: 200}\n  - {id: x, target: /b, status: 200}\n")
    with pytest.raises(CaseError):
        cases.load_cases(f)
