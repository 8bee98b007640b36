"""conformance/known-failures.yaml: per service, the checks expected to fail, each with a reason.

Every entry becomes a strict xfail: the check must fail (an unexpected pass fails the run, so a
fixed bug forces the entry's removal), and an entry naming no existing check is an error.
"""
from __future__ import annotations

import pathlib

import yaml

KNOWN_FILE = pathlib.Path(__file__).resolve().parent / "known-failures.yaml"


class KnownFailuresError(ValueError):
    pass


def load_known(name: str | None, path: pathlib.Path = KNOWN_FILE) -> dict[str, str]:
    """{check id: reason} for the service ``name`` (empty if none or unnamed)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    doc = doc or {}
    if not isinstance(doc, dict):
        raise KnownFailuresError(f"{path}: the top level must be a mapping service name -> list")
    out: dict[str, str] = {}
    for service, entries in doc.items():
        entries = entries or []
        if not isinstance(entries, list):
            raise KnownFailuresError(f"{path}: {service}: expected a list of {{check, reason}}")
        for e in entries:
            if not isinstance(e, dict) or set(e) != {"check", "reason"}:
                raise KnownFailuresError(f"{path}: {service}: each entry has exactly 'check' and 'reason': {e!r}")
            check, reason = e["check"], e["reason"]
            if not isinstance(check, str) or "/" not in check:
                raise KnownFailuresError(f"{path}: {service}: check must be '<group>/<name>': {check!r}")
            if not isinstance(reason, str) or not reason.strip():
                raise KnownFailuresError(f"{path}: {service}: {check}: a non-empty reason is required")
            if service == name:
                if check in out:
                    raise KnownFailuresError(f"{path}: {service}: {check} listed twice")
                out[check] = reason.strip()
    return out
