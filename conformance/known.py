"""Known failures, beside each implementation: the key `known_failures` of its descriptor
(services/<name>/cityref.yaml), or of a YAML file given with --known-failures (alias --known) for an
implementation that lives elsewhere, e.g. in its own repository. A list of
{check: <group>/<name>, reason: <why, with evidence>}. The differential group reads the key
`differential_known` of the same files, so one file can hold both: a list of {class, reason,
reproduction, upstream}, for a framework that breaks the spec's safety tier (or the application tier)
with no setting or extension point to fix it: `reproduction` is a minimal standalone reproduction
and `upstream` an upstream-ready bug report (paths; in this repository, under docs/upstream/).

Every entry becomes a strict xfail: the check must fail (an unexpected pass fails the run, so a
fixed bug forces the entry's removal), and an entry naming no existing check is an error.
"""

from __future__ import annotations

import pathlib

import yaml

from cityref_tools.descriptors import SERVICES


class KnownFailuresError(ValueError):
    pass


def descriptor(name: str | None) -> pathlib.Path | None:
    """The descriptor of this repository's implementation ``name``, if there is one."""
    if not name:
        return None
    path = SERVICES / name / "cityref.yaml"
    return path if path.exists() else None


def entries(path: pathlib.Path, key: str, field: str) -> dict[str, str]:
    """{<field>: reason} from the list under ``key`` in the YAML file ``path`` (validated)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(doc, dict):
        raise KnownFailuresError(f"{path}: the top level must be a mapping")
    items = doc.get(key) or []
    if not isinstance(items, list):
        raise KnownFailuresError(f"{path}: {key}: expected a list of {{{field}, reason}}")
    out: dict[str, str] = {}
    for e in items:
        if not isinstance(e, dict) or set(e) != {field, "reason"}:
            raise KnownFailuresError(f"{path}: {key}: each entry has exactly '{field}' and 'reason': {e!r}")
        what, reason = e[field], e["reason"]
        if not isinstance(what, str) or not what:
            raise KnownFailuresError(f"{path}: {key}: '{field}' must be a non-empty string: {e!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise KnownFailuresError(f"{path}: {key}: {what}: a non-empty reason is required")
        if what in out:
            raise KnownFailuresError(f"{path}: {key}: {what} listed twice")
        out[what] = reason.strip()
    return out


def load_known(name: str | None, path: pathlib.Path | None = None) -> dict[str, str]:
    """{check id: reason} for implementation ``name``: from ``path`` if given, else from its
    descriptor in this repository (empty if it has none)."""
    path = path or descriptor(name)
    if path is None:
        return {}
    out = entries(path, "known_failures", "check")
    bad = [check for check in out if "/" not in check]
    if bad:
        raise KnownFailuresError(f"{path}: known_failures: check must be '<group>/<name>': {bad[0]!r}")
    return out


DIFFERENTIAL_FIELDS = ("class", "reason", "reproduction", "upstream")
# `intermittent: true`: the defect depends on what other connections sent before (state the framework
# keeps across requests), so a run may not hit it: the entry is not stale when it excuses nothing.
DIFFERENTIAL_OPTIONAL = ("intermittent",)


def differential_entries(path: pathlib.Path) -> dict[str, dict[str, str]]:
    """{class: {reason, reproduction, upstream[, intermittent]}} from the `differential_known` list of
    ``path`` (intermittent: "true" when the entry says so)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(doc, dict):
        raise KnownFailuresError(f"{path}: the top level must be a mapping")
    items = doc.get("differential_known") or []
    if not isinstance(items, list):
        raise KnownFailuresError(f"{path}: differential_known: expected a list of {{{', '.join(DIFFERENTIAL_FIELDS)}}}")
    out: dict[str, dict[str, str]] = {}
    for e in items:
        if (
            not isinstance(e, dict)
            or not set(DIFFERENTIAL_FIELDS) <= set(e) <= set(DIFFERENTIAL_FIELDS + DIFFERENTIAL_OPTIONAL)
            or not isinstance(e.get("intermittent", False), bool)
        ):
            raise KnownFailuresError(
                f"{path}: differential_known: each entry has exactly {', '.join(DIFFERENTIAL_FIELDS)} (a framework "
                f"defect needs a standalone reproduction and an upstream report), and optionally "
                f"intermittent: true: {e!r}"
            )
        for field in DIFFERENTIAL_FIELDS:
            if not isinstance(e[field], str) or not e[field].strip():
                raise KnownFailuresError(f"{path}: differential_known: '{field}' must be a non-empty string: {e!r}")
        if e["class"] in out:
            raise KnownFailuresError(f"{path}: differential_known: {e['class']} listed twice")
        out[e["class"]] = {k: e[k].strip() for k in DIFFERENTIAL_FIELDS[1:]}
        if e.get("intermittent"):
            out[e["class"]]["intermittent"] = "true"
    return out
