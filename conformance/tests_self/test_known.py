"""Known failures: the `known_failures` list of a descriptor (or of a --known file)."""

import pytest

from conformance.known import SERVICES, KnownFailuresError, differential_entries, load_known


def test_every_descriptor_loads_and_the_reference_has_none():
    for path in SERVICES.glob("*/cityref.yaml"):
        load_known(path.parent.name)
        differential_entries(path)
    assert load_known("rust-actix") == {}
    assert load_known(None) == {}
    assert load_known("not-a-service") == {}


def test_entries(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text("name: svc\nknown_failures:\n  - {check: golden/x, reason: because}\n")
    assert load_known("svc", f) == {"golden/x": "because"}
    f.write_text("name: svc\n")
    assert load_known("svc", f) == {}


@pytest.mark.parametrize(
    "text",
    [
        "known_failures:\n  - {check: golden/x, reason: ''}\n",
        "known_failures:\n  - {check: golden/x}\n",
        "known_failures:\n  - {check: nogroup, reason: r}\n",
        "known_failures:\n  - {check: golden/x, reason: r}\n  - {check: golden/x, reason: r}\n",
        "known_failures: {golden/x: r}\n",
        "- a\n",
    ],
)
def test_invalid(tmp_path, text):
    f = tmp_path / "k.yaml"
    f.write_text(text)
    with pytest.raises(KnownFailuresError):
        load_known("svc", f)
