"""Golden cases: ``conformance/cases.yaml`` plus the cases generated from the fixture and HEAD twins.

A case is one raw request and the exact response the spec requires. See the header of
``cases.yaml`` for the format.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

import yaml

from cityref_tools import resources
from conformance import fixture
from conformance.fixture import compact, error_body

CASES_FILE = resources.path("conformance/cases.yaml")
SPEC_FILE = resources.path("spec/openapi.yaml")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9.+_-]*$")
CASE_KEYS = {
    "id",
    "why",
    "method",
    "target",
    "send_headers",
    "send_body",
    "status",
    "content_type",
    "media_type",
    "headers",
    "body",
    "json",
    "message",
    "body_file",
    "volatile",
}


class CaseError(ValueError):
    pass


@dataclasses.dataclass
class Case:
    id: str
    method: str
    target: bytes
    status: int
    content_type: str | None = "application/json"  # exact Content-Type; None: not checked here
    media_type: str | None = None  # type/subtype only (parameters allowed)
    headers: dict[str, str] = dataclasses.field(default_factory=dict)  # exact values
    body: bytes | None = None  # exact bytes; None: not compared
    send_headers: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    send_body: bytes | None = None
    why: str = ""
    volatile: bool = False  # body differs between requests (/metrics)
    head_of: str | None = None  # HEAD twin of this GET case
    source: str = "cases.yaml"

    @property
    def path(self) -> str:
        return self.target.split(b"?", 1)[0].decode("ascii")

    def short_target(self, limit: int = 120) -> str:
        t = self.target.decode("ascii")
        return t if len(t) <= limit else f"{t[: limit - 30]}...({len(t)} bytes)...{t[-20:]}"


def spec_paths(spec_file: pathlib.Path = SPEC_FILE) -> list[str]:
    return list(yaml.safe_load(spec_file.read_text(encoding="utf-8"))["paths"])


def build_target(value) -> bytes:
    """A target string, or ``{prefix: ..., length: N, fill: "a"}`` padded to exactly N bytes."""
    if isinstance(value, str):
        try:
            target = value.encode("ascii")
        except UnicodeEncodeError:
            raise CaseError(f"target must be ASCII (percent-encode the rest): {value[:80]!r}") from None
    elif isinstance(value, dict) and set(value) <= {"prefix", "length", "fill"} and "length" in value:
        prefix = str(value.get("prefix", "")).encode("ascii")
        fill = str(value.get("fill", "a")).encode("ascii")
        length = int(value["length"])
        if len(fill) != 1 or len(prefix) > length:
            raise CaseError(f"bad padded target {value!r}")
        target = prefix + fill * (length - len(prefix))
    else:
        raise CaseError(f"target must be a string or {{prefix, length, fill}}: {value!r}")
    if not target.startswith(b"/") or any(b <= 0x20 or b >= 0x7F for b in target):
        raise CaseError(f"target must start with / and be visible ASCII: {target[:80]!r}")
    return target


def _case_from_yaml(raw: dict, defaults: dict) -> Case:
    if not isinstance(raw, dict):
        raise CaseError(f"a case must be a mapping: {raw!r}")
    unknown = set(raw) - CASE_KEYS
    cid = raw.get("id")
    if unknown:
        raise CaseError(f"case {cid}: unknown keys {sorted(unknown)}")
    if not isinstance(cid, str) or not ID_RE.match(cid):
        raise CaseError(f"case id must match {ID_RE.pattern}: {cid!r}")
    for key in ("target", "status"):
        if key not in raw:
            raise CaseError(f"case {cid}: {key} is required")
    bodies = [k for k in ("body", "json", "message", "body_file") if k in raw]
    if len(bodies) > 1:
        raise CaseError(f"case {cid}: at most one of body/json/message/body_file, got {bodies}")
    merged = {**defaults, **raw}
    body = None
    if "body" in raw and raw["body"] is not None:
        body = str(raw["body"]).encode("utf-8")
    elif "json" in raw:
        body = compact(raw["json"])
    elif "message" in raw:
        body = error_body(str(raw["message"]))
    elif "body_file" in raw:
        body = resources.path(raw["body_file"]).read_bytes()
    send_headers = [(str(k), str(v)) for k, v in (raw.get("send_headers") or {}).items()]
    send_body = raw.get("send_body")
    media = merged.get("media_type")
    content_type = merged.get("content_type") if media is None else None
    return Case(
        id=cid,
        method=str(merged.get("method", "GET")),
        target=build_target(raw["target"]),
        status=int(raw["status"]),
        content_type=content_type,
        media_type=media,
        headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
        body=body,
        send_headers=send_headers,
        send_body=None if send_body is None else str(send_body).encode("utf-8"),
        why=str(raw.get("why", "")),
        volatile=bool(raw.get("volatile", False)),
    )


def fixture_cases() -> list[Case]:
    """Every fixture city in every language; expected values from conformance.fixture (the oracle)."""
    out = []
    for city_id, lang, status, body in fixture.fixture_expectations():
        out.append(
            Case(
                id=f"city-{city_id}-{lang}",
                method="GET",
                target=f"/city/v1/get?id={city_id}&language={lang}".encode(),
                status=status,
                body=body,
                why="fixture city rendered per the spec's rules",
                source="fixture",
            )
        )
    return out


def head_twin(case: Case) -> Case:
    """HEAD of a GET case on a listed path: same status and headers, Content-Length of the GET body, no body."""
    headers = dict(case.headers)
    if case.body is not None and not case.volatile:
        headers["Content-Length"] = str(len(case.body))
    return dataclasses.replace(
        case,
        id=f"{case.id}.head",
        method="HEAD",
        headers=headers,
        body=b"",
        head_of=case.id,
        send_headers=list(case.send_headers),
        why=f"HEAD twin of {case.id}",
        source="head",
    )


def load_cases(path: pathlib.Path = CASES_FILE) -> list[Case]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise CaseError(f"{path}: expected a mapping with a 'cases' list")
    defaults = doc.get("defaults") or {}
    gen = doc.get("generate") or {}
    cases = [_case_from_yaml(raw, defaults) for raw in doc["cases"]]
    if gen.get("fixture", False):
        cases += fixture_cases()
    if gen.get("head", False):
        listed = set(spec_paths())
        cases += [head_twin(c) for c in list(cases) if c.method == "GET" and c.path in listed]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(f"duplicate case id {c.id}")
        seen.add(c.id)
    return cases
