"""The desync tier: fixed classes generated from the grammar of HTTP/1.1, not drawn from a list.

Every case here is sent once per run to every implementation by the differential group, with
``GET /city/v1/get?id=3&language=cs`` pipelined behind it on the same connection, so that a desync
shows: a body read as a request answers ``GET /smuggled`` (a 404) or puts an answer where city 3's
belongs, and a request read as a body leaves city 3 unanswered on an open connection. Two families:

* **Framing** (RFC 9112 section 6.3, section 7.1; PortSwigger's request-smuggling research and the
  Transfer-Encoding and Content-Length permutations of its HTTP Request Smuggler): every
  ``Transfer-Encoding`` variant in three shapes (``te:`` alone, ``cl.te:`` behind a short
  ``Content-Length``, ``te.cl:`` beside a ``Content-Length`` that covers a chunked body ending early),
  every ``Content-Length`` variant (``cl:``), every chunk-line variant (``chunk:``), and a body
  on requests whose route takes none (``cl.0:``).
* **The request target** (RFC 3986's grammar, RFC 9112 section 3.2): every byte value 0x00-0xFF raw
  at every position of the target (``target:<byte class>@<position>``), its percent-escape in the
  path, a name and a value (``pct:<byte class>@<position>``), and every request-target form
  (``form:``).

``classes()`` is every class the grammar produces, ``cases()`` what the suite sends; the self-tests
check that each class the grammar can produce is sent, and that every byte sits at every position.
"""

from __future__ import annotations

import dataclasses

from conformance.hostile import Case

CRLF = b"\r\n"
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"  # 35 bytes: answered, it is a 404
FIRST = b"/city/v1/get?id=1&language=en"
FOLLOW = b"GET /city/v1/get?id=3&language=cs HTTP/1.1\r\nHost: x\r\n\r\n"
FOLLOW_CITY = 3
INDEX_BASE = 1_000_000  # grammar cases are numbered from here, apart from the generated requests
FAMILIES = frozenset({"te", "cl.te", "te.cl", "cl", "chunk", "cl.0", "target", "pct", "form"})  # class prefixes

# ---------------------------------------------------------------- framing


def chunked(payload: bytes, size: bytes | None = None, line: bytes = CRLF, after_data: bytes = CRLF, last=b"0\r\n\r\n"):
    """One chunk holding ``payload`` (its size line as given, else its hex length), then the last chunk."""
    return (size if size is not None else b"%x" % len(payload)) + line + payload + after_data + last


# Transfer-Encoding variants: (name, header lines, what RFC 9112 makes of them). An ignored variant
# is sent only as te.cl: alone or behind a short Content-Length, its bytes after the head are requests.
#   valid:   a chunked body (case-insensitive coding, optional whitespace, chunked last in the list)
#   invalid: the server must refuse (400, or 501 for a coding it does not know) and close
#   ignored: not a Transfer-Encoding field at all: the request has no body (unless Content-Length)
TE_VARIANTS: list[tuple[str, list[bytes], str]] = [
    ("plain", [b"Transfer-Encoding: chunked"], "valid"),
    ("case-value", [b"Transfer-Encoding: Chunked"], "valid"),
    ("case-upper", [b"TRANSFER-ENCODING: CHUNKED"], "valid"),
    ("no-space", [b"Transfer-Encoding:chunked"], "valid"),
    ("trailing-space", [b"Transfer-Encoding: chunked "], "valid"),
    ("tab-before-value", [b"Transfer-Encoding:\tchunked"], "valid"),
    ("identity-then-chunked", [b"Transfer-Encoding: identity", b"Transfer-Encoding: chunked"], "invalid"),
    ("chunked-then-identity", [b"Transfer-Encoding: chunked", b"Transfer-Encoding: identity"], "invalid"),
    ("second-field-same", [b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked"], "invalid"),
    ("list-chunked-not-last", [b"Transfer-Encoding: chunked, identity"], "invalid"),
    ("list-gzip-chunked", [b"Transfer-Encoding: gzip, chunked"], "invalid"),
    ("list-chunked-twice", [b"Transfer-Encoding: chunked, chunked"], "invalid"),
    ("identity", [b"Transfer-Encoding: identity"], "invalid"),
    ("unknown-coding", [b"Transfer-Encoding: xchunked"], "invalid"),
    ("truncated", [b"Transfer-Encoding: chunk"], "invalid"),
    ("quoted", [b'Transfer-Encoding: "chunked"'], "invalid"),
    ("space-before-colon", [b"Transfer-Encoding : chunked"], "invalid"),
    ("tab-before-colon", [b"Transfer-Encoding\t: chunked"], "invalid"),
    ("obs-fold-value", [b"Transfer-Encoding:", b" chunked"], "invalid"),
    # folded into the field before it (a recipient may replace obs-fold with a space): no body
    ("obs-fold-field", [b"X-Folded: a", b" Transfer-Encoding: chunked"], "ignored"),
    ("vertical-tab", [b"Transfer-Encoding:\x0bchunked"], "invalid"),
    ("form-feed", [b"Transfer-Encoding: \x0cchunked"], "invalid"),
    ("non-ascii", [b"Transfer-Encoding: ch\xc3\xbcnked"], "invalid"),
    ("nul-in-value", [b"Transfer-Encoding: chunked\x00"], "invalid"),
    ("bare-cr", [b"Transfer-Encoding: chunked\rX: y"], "invalid"),
    ("underscore-name", [b"Transfer_Encoding: chunked"], "ignored"),
    ("space-in-name", [b"Transfer Encoding: chunked"], "ignored"),
    ("content-encoding", [b"Content-Encoding: chunked"], "ignored"),
    ("connection-listed", [b"Connection: Transfer-Encoding", b"Transfer-Encoding: chunked"], "valid"),
]

# Content-Length variants (the body is the 35 bytes of SMUGGLED): (name, header lines)
CL_VARIANTS: list[tuple[str, list[bytes]]] = [
    ("plain", [b"Content-Length: 35"]),
    ("leading-zeros", [b"Content-Length: 0035"]),
    ("whitespace", [b"Content-Length:   35  "]),
    ("tab-before-value", [b"Content-Length:\t35"]),
    ("plus-sign", [b"Content-Length: +35"]),
    ("minus-one", [b"Content-Length: -1"]),
    ("negative", [b"Content-Length: -35"]),
    ("hex", [b"Content-Length: 0x23"]),
    ("decimal-point", [b"Content-Length: 35.0"]),
    ("space-inside", [b"Content-Length: 3 5"]),
    ("empty", [b"Content-Length: "]),
    ("list-same", [b"Content-Length: 35, 35"]),
    ("list-conflict", [b"Content-Length: 35, 0"]),
    ("list-conflict-zero-first", [b"Content-Length: 0, 35"]),
    ("duplicate-same", [b"Content-Length: 35", b"Content-Length: 35"]),
    ("duplicate-conflict", [b"Content-Length: 35", b"Content-Length: 0"]),
    ("duplicate-conflict-zero-first", [b"Content-Length: 0", b"Content-Length: 35"]),
    ("over-2^63", [b"Content-Length: 9223372036854775843"]),  # 2**63 + 35: a signed wrap is negative
    ("over-2^64", [b"Content-Length: 18446744073709551651"]),  # 2**64 + 35: an unsigned wrap reads 35
    ("space-before-colon", [b"Content-Length : 35"]),
    ("obs-fold-value", [b"Content-Length:", b" 35"]),
    ("non-ascii-digit", ["Content-Length: ３５".encode()]),
]

# Chunk-line variants of a chunked body holding SMUGGLED (RFC 9112 section 7.1): (name, body)
CHUNK_VARIANTS: list[tuple[str, bytes]] = [
    ("plain", chunked(SMUGGLED)),
    ("size-leading-zeros", chunked(SMUGGLED, b"00000023")),
    ("size-upper-case", chunked(SMUGGLED, b"0023")),
    ("size-overflow", chunked(SMUGGLED, b"10000000000000023")),  # 2**64 + 0x23: a wrap reads 0x23
    ("size-hex-prefix", chunked(SMUGGLED, b"0x23")),
    ("size-negative", chunked(SMUGGLED, b"-23")),
    ("size-whitespace", chunked(SMUGGLED, b"23 ")),
    ("size-leading-space", chunked(SMUGGLED, b" 23")),
    ("size-empty", chunked(SMUGGLED, b"")),
    ("extension", chunked(SMUGGLED, b"23;ext=1")),
    ("extension-quoted", chunked(SMUGGLED, b'23;ext="a;b"')),
    ("extension-bare", chunked(SMUGGLED, b"23;")),
    ("extension-whitespace", chunked(SMUGGLED, b"23 ;ext")),
    ("bare-lf-size-line", chunked(SMUGGLED, line=b"\n")),
    ("bare-cr-size-line", chunked(SMUGGLED, line=b"\r")),
    ("bare-lf-after-data", chunked(SMUGGLED, after_data=b"\n")),
    ("no-crlf-after-data", chunked(SMUGGLED, after_data=b"")),
    ("data-longer-than-size", chunked(SMUGGLED, b"22")),
    ("data-shorter-than-size", chunked(SMUGGLED, b"24")),
    ("trailer", chunked(SMUGGLED, last=b"0\r\nX-Trailer: 1\r\n\r\n")),
    ("trailer-content-length", chunked(SMUGGLED, last=b"0\r\nContent-Length: 35\r\n\r\n")),
    ("trailer-no-colon", chunked(SMUGGLED, last=b"0\r\nX-Trailer\r\n\r\n")),
    ("last-chunk-extension", chunked(SMUGGLED, last=b"0;ext=1\r\n\r\n")),
    ("last-chunk-leading-zeros", chunked(SMUGGLED, last=b"000\r\n\r\n")),
    ("no-last-crlf", chunked(SMUGGLED, last=b"0\r\n")),
]

# CL.0: a body framed by Content-Length on a request whose route reads none: (name, method, target)
CL0_ROUTES: list[tuple[str, str, bytes]] = [
    ("get", "GET", FIRST),
    ("head", "HEAD", FIRST),
    ("not-found", "GET", b"/nope"),
    ("method-not-allowed", "POST", b"/city/v1/get"),
    ("options", "OPTIONS", b"/city/v1/get"),
]

# ---------------------------------------------------------------- the request target

# RFC 3986's classes of a byte, split where RFC 9112's request line or the query grammar gives a
# byte its own role; every byte 0x00-0xFF is in exactly one
SPECIAL = {
    0x00: "nul",
    0x09: "htab",
    0x0A: "lf",
    0x0D: "cr",
    0x20: "space",
    0x23: "hash",
    0x25: "percent",
    0x2F: "slash",
    0x3F: "question",
    0x7F: "del",
}
UNRESERVED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
SUB_DELIMS = b"!$&'()*+,;="
GEN_DELIMS = b":[]@"  # the rest of RFC 3986's gen-delims: / ? # have their own classes
UNSAFE = b'"<>\\^`{|}'  # printable ASCII that RFC 3986 never allows raw


def byte_class(b: int) -> str:
    if b in SPECIAL:
        return SPECIAL[b]
    if b in UNRESERVED:
        return "unreserved"
    if b in SUB_DELIMS:
        return "sub-delim"
    if b in GEN_DELIMS:
        return "gen-delim"
    if b in UNSAFE:
        return "unsafe"
    if b < 0x20:
        return "ctl"
    return "obs-text"  # 0x80-0xFF


# Where a byte goes in FIRST: (position, prefix, suffix) around it
POSITIONS: list[tuple[str, bytes, bytes]] = [
    ("path", b"/city", b"/v1/get?id=1&language=en"),
    ("after-question", b"/city/v1/get?", b"id=1&language=en"),
    ("name", b"/city/v1/get?i", b"d=1&language=en"),
    # inside the language's value: a digit beside the id would name a city of the fixture's failures
    ("value", b"/city/v1/get?id=1&language=e", b"n"),
    ("query", b"/city/v1/get?id=1&", b"&language=en"),
    ("end", b"/city/v1/get?id=1&language=en", b""),
]
PCT_POSITIONS = ["path", "name", "value"]

# RFC 9112 section 3.2's four forms of the request target, and their neighbours
FORMS: list[tuple[str, str, bytes]] = [
    ("origin", "GET", FIRST),
    ("absolute", "GET", b"http://127.0.0.1" + FIRST),
    ("absolute-other-host", "GET", b"http://example.org" + FIRST),
    ("absolute-https", "GET", b"https://127.0.0.1" + FIRST),
    ("absolute-no-path", "GET", b"http://127.0.0.1"),
    ("authority", "GET", b"127.0.0.1:80"),
    ("authority-connect", "CONNECT", b"127.0.0.1:80"),
    ("asterisk", "GET", b"*"),
    ("asterisk-options", "OPTIONS", b"*"),
    ("double-slash", "GET", b"//city/v1/get?id=1&language=en"),
    ("no-leading-slash", "GET", b"city/v1/get?id=1&language=en"),
]


# ---------------------------------------------------------------- the cases


@dataclasses.dataclass(frozen=True)
class Production:
    cls: str
    method: str
    data: bytes  # the request, without the pipelined follow-up


def _request(method: str, target: bytes, headers: list[bytes], body: bytes = b"", version=b"HTTP/1.1") -> bytes:
    head = [method.encode() + b" " + target + b" " + version, b"Host: x", *headers]
    return CRLF.join(head) + CRLF + CRLF + body


TE_SHAPES = ("te", "cl.te", "te.cl")  # the families of the Transfer-Encoding variants


def shapes(kind: str) -> tuple[str, ...]:
    """The shapes a Transfer-Encoding variant is sent in: an ignored field leaves a body-less request,
    so alone or behind a short Content-Length its bytes after the head are requests."""
    return ("te.cl",) if kind == "ignored" else TE_SHAPES


def framing() -> list[Production]:
    body = chunked(SMUGGLED)
    early = b"0\r\n\r\n" + SMUGGLED  # ends at its last chunk; a Content-Length covers all of it
    headers = {  # each shape's header lines around a variant's
        "te": lambda lines: lines,
        "cl.te": lambda lines: [b"Content-Length: 4", *lines],
        "te.cl": lambda lines: [*lines, b"Content-Length: %d" % len(early)],
    }
    out = []
    for name, lines, kind in TE_VARIANTS:
        for shape in shapes(kind):
            sent = early if shape == "te.cl" else body
            out.append(Production(f"{shape}:{name}", "GET", _request("GET", FIRST, headers[shape](lines), sent)))
    for name, lines in CL_VARIANTS:
        out.append(Production(f"cl:{name}", "GET", _request("GET", FIRST, lines, SMUGGLED)))
    for name, body in CHUNK_VARIANTS:
        out.append(Production(f"chunk:{name}", "GET", _request("GET", FIRST, [b"Transfer-Encoding: chunked"], body)))
    for name, method, target in CL0_ROUTES:
        out.append(Production(f"cl.0:{name}", method, _request(method, target, [b"Content-Length: 35"], SMUGGLED)))
    return out


def target() -> list[Production]:
    out = []
    for position, before, after in POSITIONS:
        for b in range(256):
            cls = f"target:{byte_class(b)}@{position}"
            out.append(Production(cls, "GET", _request("GET", before + bytes([b]) + after, [])))
    for position, before, after in POSITIONS:
        if position not in PCT_POSITIONS:
            continue
        for b in range(256):
            cls = f"pct:{byte_class(b)}@{position}"
            out.append(Production(cls, "GET", _request("GET", before + b"%%%02X" % b + after, [])))
    for name, method, t in FORMS:
        out.append(Production(f"form:{name}", method, _request(method, t, [])))
    return out


def productions() -> list[Production]:
    return framing() + target()


def classes() -> list[str]:
    """Every class the grammar can produce, in order."""
    seen: dict[str, None] = {}
    for name, _, kind in TE_VARIANTS:
        seen.update({f"{s}:{name}": None for s in shapes(kind)})
    seen.update({f"cl:{n}": None for n, _ in CL_VARIANTS})
    seen.update({f"chunk:{n}": None for n, _ in CHUNK_VARIANTS})
    seen.update({f"cl.0:{n}": None for n, _, _ in CL0_ROUTES})
    for family, positions in (("target", [p for p, _, _ in POSITIONS]), ("pct", PCT_POSITIONS)):
        for p in positions:
            seen.update({f"{family}:{byte_class(b)}@{p}": None for b in range(256)})
    seen.update({f"form:{n}": None for n, _, _ in FORMS})
    return list(seen)


def cases() -> list[Case]:
    """What the differential group sends: each production with FOLLOW pipelined behind it."""
    return [
        Case(INDEX_BASE + i, (p.cls,), p.data + FOLLOW, p.method, pipelined=True, follow_city=FOLLOW_CITY)
        for i, p in enumerate(productions())
    ]
