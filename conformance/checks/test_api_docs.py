"""Group `api-docs`: GET /api-docs serves spec/openapi.json byte for byte as application/json."""

from cityref_tools import resources
from conformance.golden import show

SPEC_JSON = resources.path("spec/openapi.json")


def test_api_docs_bytes(http):
    resp = http("GET", "/api-docs")
    want = SPEC_JSON.read_bytes()
    assert resp.status == 200, f"status {resp.status}"
    if resp.body != want:
        pairs = enumerate(zip(resp.body, want, strict=False))  # the shorter one's length at most
        at = next((i for i, (a, b) in pairs if a != b), min(len(resp.body), len(want)))
        raise AssertionError(
            f"body differs from spec/openapi.json ({len(resp.body)} vs {len(want)} bytes) at byte "
            f"{at}: got {show(resp.body[max(0, at - 40) : at + 40])}, "
            f"want {show(want[max(0, at - 40) : at + 40])}"
        )


def test_api_docs_content_type(http):
    resp = http("GET", "/api-docs")
    assert resp.content_type == "application/json", f"Content-Type {resp.content_type!r}"
