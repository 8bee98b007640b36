"""Comparing a response with a golden case (pure functions, unit-tested in tests_self)."""

from __future__ import annotations

from conformance.cases import Case
from conformance.rawhttp import Response

VOLATILE_HEADERS = {"date"}


def show(b: bytes | None, limit: int = 400) -> str:
    if b is None:
        return "None"
    text = b.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= limit else text[:limit] + f"...({len(b)} bytes)")


def compare(case: Case, resp: Response) -> list[str]:
    """Differences between the case's expectation and the response, one line each."""
    problems = []
    if resp.status != case.status:
        problems.append(f"status: want {case.status}, got {resp.status}")
    ctype = resp.content_type
    if len(resp.header_all("Content-Type")) > 1:
        problems.append(f"Content-Type sent {len(resp.header_all('Content-Type'))} times")
    if case.content_type is not None and ctype != case.content_type:
        problems.append(f"Content-Type: want {case.content_type!r}, got {ctype!r}")
    if case.media_type is not None:
        got_media = (ctype or "").split(";", 1)[0].strip().lower()
        if got_media != case.media_type:
            problems.append(f"Content-Type: want media type {case.media_type!r}, got {ctype!r}")
    for name, want in case.headers.items():
        got = resp.header_all(name)
        if got != [want]:
            problems.append(f"header {name}: want {want!r}, got {got if got else 'none'}")
    if case.method.upper() == "HEAD":
        if resp.extra:
            problems.append(f"HEAD response carried {len(resp.extra)} body bytes: {show(resp.extra, 80)}")
    else:
        if case.body is not None and resp.body != case.body:
            problems.append(f"body: want {show(case.body)}\n      got  {show(resp.body)}")
        if resp.extra:
            problems.append(f"{len(resp.extra)} bytes after the framed body: {show(resp.extra, 80)}")
    return problems


def compare_head(get: Response, head: Response, volatile_length: bool = False) -> list[str]:
    """HEAD must answer like GET: same status and headers (Date aside), Content-Length included."""
    problems = []
    if head.status != get.status:
        problems.append(f"HEAD status {head.status} != GET status {get.status}")
    cl = head.header("Content-Length")
    if cl is None:
        problems.append("HEAD response has no Content-Length")
    elif not volatile_length and cl != str(len(get.body)):
        problems.append(f"HEAD Content-Length {cl} != GET body length {len(get.body)}")

    def normal(resp: Response) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for k, v in resp.headers:
            k = k.lower()
            if k in VOLATILE_HEADERS or (volatile_length and k == "content-length"):
                continue
            out.setdefault(k, []).append(v)
        return out

    g, h = normal(get), normal(head)
    for name in sorted(set(g) | set(h)):
        if g.get(name) != h.get(name):
            problems.append(f"header {name}: GET {g.get(name)} vs HEAD {h.get(name)}")
    return problems
