"""known-failures.yaml loading."""
import pytest

from conformance.known import KNOWN_FILE, KnownFailuresError, load_known


def test_repository_file_loads_and_reference_has_none():
    assert load_known("rust-actix", KNOWN_FILE) == {}


def test_entries(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text("svc:\n  - {check: golden/x, reason: because}\nother:\n  - {check: spec/y, reason: r}\n")
    assert load_known("svc", f) == {"golden/x": "because"}
    assert load_known(None, f) == {}


@pytest.mark.parametrize("text", [
    "svc:\n  - {check: golden/x, reason: ''}\n",
    "svc:\n  - {check: golden/x}\n",
    "svc:\n  - {check: nogroup, reason: r}\n",
    "svc:\n  - {check: golden/x, reason: r}\n  - {check: golden/x, reason: r}\n",
    "- a\n",
])
def test_invalid(tmp_path, text):
    f = tmp_path / "k.yaml"
    f.write_text(text)
    with pytest.raises(KnownFailuresError):
        load_known("svc", f)
