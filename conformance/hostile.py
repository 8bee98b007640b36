"""A grammar-based generator of hostile and unusual HTTP/1.x requests, for the differential group.

A request is built from the grammar of RFC 9112 (request line, target, query, header fields,
framing), and then a few of its parts are mutated: a method token in lower case or unknown,
raw bytes in the target that RFC 3986 does not allow, spaces and tabs inside the request line,
other protocol versions, header sections that are too long or malformed, bodies and chunked
bodies where none are expected, a second request pipelined behind the first. Every mutation
names the *class* it belongs to (``target:raw-quote``, ``version:http/1.0``, ...): the
differential group groups answers by those classes, and known-failures entries name them.

Everything is drawn from one ``random.Random(seed)``, so a seed reproduces the requests byte for
byte.
"""

from __future__ import annotations

import dataclasses
import random

CRLF = b"\r\n"
LISTED = ["/city/v1/get"]
OTHER_PATHS = ["/", "/city/v1/get/", "/City/v1/get", "/city/v1", "/city/v1/get/x", "/nope", "/city/v1/./get"]
LANGS = ["cs", "de", "en", "pl", "sk"]
# the RFC 3986 gen-delims/sub-delims/unreserved never need escaping; these printable ASCII bytes do
RAW_SPECIAL = {
    '"': "quote",
    "<": "angle",
    ">": "angle",
    "{": "brace",
    "}": "brace",
    "|": "pipe",
    "\\": "backslash",
    "^": "caret",
    "`": "backtick",
}
UTF8_WORDS = ["Plzeň", "Zürich", "Łódź", "城市", "😀"]
UNKNOWN_METHODS = ["FOO", "PURGE", "PROPFIND", "M-SEARCH", "LINK", "X_Y"]
FOLLOW_UP = b"GET /city/v1/get?id=1&language=en HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
FOLLOW_UP_HEAD = b"HEAD /city/v1/get?id=1&language=en HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@dataclasses.dataclass
class Case:
    index: int
    classes: tuple[str, ...]  # what is unusual about it; () for a plain request
    data: bytes  # exactly what goes on the wire
    method: str  # the method token as sent (HEAD answers have no body)
    pipelined: bool = False  # FOLLOW_UP (or FOLLOW_UP_HEAD) was appended after the request
    expect_close: bool = False  # the connection ends after the answer (Connection: close, or HTTP/1.0)
    asked_close: bool = False  # a `Connection: close` field was sent (the safety tier's rule)
    follow_method: str = "GET"  # the pipelined request's method
    follow_city: int = 1  # the city the pipelined GET asks for

    @property
    def methods(self) -> list[str]:
        """The method of each request sent, in order."""
        return [self.method, self.follow_method] if self.pipelined else [self.method]

    @property
    def label(self) -> str:
        return ",".join(self.classes) or "plain"


def _value(rng: random.Random, name: str) -> str:
    if name == "language":
        return rng.choice(LANGS + ["xx", "", "CS", "en-US", "e%6E"])
    return rng.choice(
        [
            "1",
            "3",
            "7",
            "9",
            "999",
            "0",
            "-1",
            "abc",
            "",
            "3.0",
            "%33",
            "1e3",
            "9223372036854775807",
            "9223372036854775808",
            "+3",
            "03",
        ]
    )


def _query(rng: random.Random, classes: list[str]) -> str:
    pairs = []
    for name in ("id", "language"):
        if rng.random() < 0.9:
            pairs.append(f"{name}={_value(rng, name)}")
    if rng.random() < 0.2:
        pairs.append(rng.choice(["x=1", "ID=3", "lang=en", "=3", "id", "a=b=c"]))
    rng.shuffle(pairs)
    return rng.choice(["&", "&", "&", "&&"]).join(pairs)


def _target(rng: random.Random, classes: list[str]) -> bytes:
    r = rng.random()
    if r < 0.75:
        path = LISTED[0]
    elif r < 0.85:
        path = rng.choice(OTHER_PATHS)
        classes.append("path:unknown")
    else:
        path, cls = rng.choice(
            [
                ("/city/v1/get%00", "path:pct-nul"),
                ("/%zz", "path:pct-invalid"),
                ("/city/v1/get%zz", "path:pct-invalid"),
                ("/city/v1/%67et", "path:pct-unreserved"),
                ("/city/v1/get%2F", "path:pct-slash"),
                ("/city%2Fv1/get", "path:pct-slash"),
            ]
        )
        classes.append(cls)
    target = path.encode() + (b"?" + _query(rng, classes).encode() if rng.random() < 0.95 else b"")
    # raw bytes that a client may send without percent-encoding them
    if rng.random() < 0.3:
        kind = rng.choice(["special", "special", "utf8", "ctl", "pct-invalid", "pct-nul", "del"])
        if kind == "special":
            ch = rng.choice(sorted(RAW_SPECIAL))
            classes.append("target:raw-" + RAW_SPECIAL[ch])
            raw = ch.encode()
        elif kind == "utf8":
            classes.append("target:raw-utf8")
            raw = rng.choice(UTF8_WORDS).encode()
        elif kind == "ctl":
            classes.append("target:raw-control")
            raw = bytes([rng.choice([0, 1, 7, 8, 11, 12, 27, 31])])
        elif kind == "del":
            classes.append("target:raw-control")
            raw = b"\x7f"
        elif kind == "pct-invalid":
            classes.append("target:pct-invalid")
            raw = rng.choice([b"%zz", b"%", b"%4"])
        else:
            classes.append("target:pct-nul")
            raw = b"%00"
        if kind.startswith("pct") and b"?" not in target:
            target += b"?"  # escapes in the path are the path:* classes
        if b"?" in target and (kind.startswith("pct") or rng.random() < 0.8):
            pos = rng.randrange(target.index(b"?") + 1, len(target) + 1)  # somewhere in the query
        else:
            pos = rng.randrange(1, len(target) + 1)
        target = target[:pos] + raw + target[pos:]
    if rng.random() < 0.04:
        classes.append("target:too-long")
        pad = b"&pad=" + b"a" * (8200 + rng.randrange(0, 30000))
        target += pad if b"?" in target else b"?" + pad[1:]
    elif rng.random() < 0.04:
        classes.append("target:long-ok")
        pad = b"&pad=" + b"a" * rng.randrange(1000, 7000)
        target += pad if b"?" in target else b"?" + pad[1:]
    return target


def _method(rng: random.Random, classes: list[str]) -> str:
    r = rng.random()
    if r < 0.7:
        return "GET"
    if r < 0.78:
        return "HEAD"
    if r < 0.84:
        classes.append("method:other")
        return rng.choice(["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"])
    if r < 0.92:
        classes.append("method:lower-case")
        return rng.choice(["get", "Get", "head", "post"])
    classes.append("method:unknown-token")
    return rng.choice(UNKNOWN_METHODS)


def _request_line(rng: random.Random, method: str, target: bytes, classes: list[str]) -> tuple[bytes, str]:
    version = "HTTP/1.1"
    r = rng.random()
    if r < 0.08:
        version = "HTTP/1.0"
        classes.append("version:http/1.0")
    elif r < 0.12:
        version = rng.choice(["HTTP/2.0", "HTTP/3.0", "HTTP/0.9", "HTTP/1.2", "HTTP/9.9"])
        classes.append("version:other")
    elif r < 0.15:
        version = rng.choice(["http/1.1", "HTTP/1", "HTTP/1.1x", "HTTP/11", "HTTX/1.1", "HTTP/1.1 "])
        classes.append("version:malformed")
    sep1 = sep2 = b" "
    r = rng.random()
    if r < 0.05:
        sep1, sep2 = rng.choice([(b"  ", b" "), (b" ", b"  ")])
        classes.append("line:double-space")
    elif r < 0.09:
        sep1, sep2 = rng.choice([(b"\t", b" "), (b" ", b"\t")])
        classes.append("line:tab-separator")
    elif r < 0.14 and b"?" in target and len(target) > target.index(b"?") + 1:
        # inside the target: whitespace at its end would be a double separator (line:double-space)
        pos = rng.randrange(target.index(b"?") + 1, len(target))
        target = target[:pos] + rng.choice([b" ", b"\t", b" x "]) + target[pos:]
        classes.append("line:whitespace-in-target")
    elif r < 0.16:
        version_part = b""
        classes.append("line:no-version")
        return method.encode() + sep1 + target + version_part, version
    return method.encode() + sep1 + target + sep2 + version.encode(), version


def _headers(rng: random.Random, version: str, classes: list[str]) -> tuple[list[bytes], bool, bool]:
    """Header lines, whether the connection ends after the answer, and whether a `Connection: close`
    field asked for it."""
    lines: list[bytes] = []
    r = rng.random()
    if r < 0.03 and version == "HTTP/1.1":
        classes.append("header:no-host")
    elif r < 0.05:
        lines += [b"Host: 127.0.0.1", b"Host: example.org"]
        classes.append("header:duplicate-host")
    else:
        lines.append(rng.choice([b"Host: 127.0.0.1", b"host: 127.0.0.1", b"Host: example.org"]))
    if rng.random() < 0.3:
        lines.append(b"User-Agent: " + rng.choice([b"curl/8.5.0", b"ApacheBench/2.3", b"wrk", b"Mozilla/5.0"]))
    if rng.random() < 0.2:
        lines.append(b"Accept: " + rng.choice([b"*/*", b"application/json", b"text/html"]))
    r = rng.random()
    if r < 0.04:
        classes.append("header:long-ok")
        lines.append(b"X-Pad: " + b"p" * rng.randrange(1000, 6000))
    elif r < 0.07:
        classes.append("header:too-large")
        lines.append(b"X-Pad: " + b"p" * rng.randrange(70_000, 100_000))
    elif r < 0.09:
        classes.append("header:obs-fold")
        lines += [b"X-Folded: a", b" b"]
    elif r < 0.11:
        classes.append("header:space-before-colon")
        lines.append(b"X-Bad : 1")
    elif r < 0.13:
        classes.append("header:no-colon")
        lines.append(b"X-Bad-Line")
    elif r < 0.15:
        classes.append("header:non-ascii-value")
        lines.append("X-Name: Plzeň".encode())
    elif r < 0.17:
        classes.append("header:control-in-value")
        lines.append(b"X-Ctl: a\x01b")
    elif r < 0.19:  # hixie-76 handshake fields on a GET: RFC 9112 still frames it without a body
        classes.append("header:websocket-keys")
        lines += [b"Sec-WebSocket-Key1: 4 @1  46546xW%0l 1 5", b"Sec-WebSocket-Key2: 12998 5 Y3 1  .P00"]
    close = asked = False
    r = rng.random()
    if version == "HTTP/1.0":
        if r < 0.4:
            lines.append(rng.choice([b"Connection: keep-alive", b"Connection: Keep-Alive"]))
        else:
            close = True
    elif r < 0.45:
        lines.append(
            rng.choice(
                [
                    b"Connection: close",
                    b"Connection: close",
                    b"Connection: Close",
                    b"connection: close",
                    b"Connection: keep-alive, close",
                ]
            )
        )
        close = asked = True
    elif r < 0.55:
        lines.append(b"Connection: keep-alive")
    return lines, close, asked


def generate(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    return [one(rng, i) for i in range(count)]


# Classes that make a request malformed under RFC 9112 (the framework's parser decides what happens:
# the spec's native tier).
MALFORMED = frozenset(
    {
        "line:bare-lf",
        "line:double-space",
        "line:no-version",
        "line:tab-separator",
        "line:whitespace-in-target",
        "version:other",
        "version:malformed",
        "target:raw-control",
        "header:no-host",
        "header:duplicate-host",
        "header:obs-fold",
        "header:space-before-colon",
        "header:no-colon",
        "header:control-in-value",
        "body:bad-content-length",
        "body:content-length-and-chunked",
    }
)

# Classes of well-formed requests that every framework passes to the application: a request that
# carries only these is answered by the application (identically everywhere) and never refused.
WELL_FORMED = frozenset(
    {
        "pipelined",
        "pipelined:head",
        "path:unknown",
        "method:other",
        "method:unknown-token",
        "target:long-ok",
        "target:too-long",
        "header:long-ok",
        "header:websocket-keys",
        "body:content-length",
        "body:chunked",
        "version:http/1.0",
    }
)
PIPELINED = frozenset({"pipelined", "pipelined:head"})
# Every class the generator can produce (a self-test checks that a default run sends each one)
CLASSES = (
    MALFORMED
    | WELL_FORMED
    | {"target:raw-" + name for name in RAW_SPECIAL.values()}
    | {
        "header:non-ascii-value",
        "header:too-large",
        "line:leading-crlf",
        "method:lower-case",
        "path:pct-invalid",
        "path:pct-nul",
        "path:pct-slash",
        "path:pct-unreserved",
        "target:pct-invalid",
        "target:pct-nul",
        "target:raw-utf8",
    }
)


def well_formed(case: Case) -> bool:
    """Whether the request carries only well-formed classes, and is well-formed as a whole: an HTTP/1.0
    request with `Transfer-Encoding` has faulty framing (RFC 9112 section 6.1), and an HTTP/1.0 POST
    needs a Content-Length (RFC 1945 section 8.3), so what the framework does with those is native."""
    if not set(case.classes) <= WELL_FORMED:
        return False
    if "version:http/1.0" in case.classes:
        if "body:chunked" in case.classes:
            return False
        if case.method == "POST" and "body:content-length" not in case.classes:
            return False
    return True


def one(rng: random.Random, index: int) -> Case:
    for _ in range(50):  # most requests carry one unusual part, some none, some two
        case = _draw(rng, index)
        want = rng.choices([0, 1, 2], [10, 70, 20])[0]
        if len([c for c in case.classes if c not in PIPELINED]) <= want:
            return case
    return case


def _draw(rng: random.Random, index: int) -> Case:
    classes: list[str] = []
    method = _method(rng, classes)
    target = _target(rng, classes)
    line, version = _request_line(rng, method, target, classes)
    headers, close, asked = _headers(rng, version, classes)
    body = b""
    r = rng.random()
    if r < 0.06:
        classes.append("body:content-length")
        body = rng.choice([b"x", b"id=3&language=en", b"{}", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"])
        headers.append(b"Content-Length: " + str(len(body)).encode())
    elif r < 0.1:
        classes.append("body:chunked")
        payload = rng.choice([b"hello", b"GET / HTTP/1.1\r\n\r\n"])
        headers.append(b"Transfer-Encoding: chunked")
        body = b"%x\r\n" % len(payload) + payload + b"\r\n0\r\n\r\n"
    elif r < 0.12:
        classes.append("body:bad-content-length")
        headers.append(rng.choice([b"Content-Length: abc", b"Content-Length: -1", b"Content-Length: 1, 2"]))
    elif r < 0.13:
        classes.append("body:content-length-and-chunked")
        headers += [b"Content-Length: 4", b"Transfer-Encoding: chunked"]
        body = b"0\r\n\r\n"
    if rng.random() < 0.3:
        rng.shuffle(headers)
        if b" b" in headers:  # an obs-fold continuation stays on its own field, not on another
            headers.remove(b" b")
            headers.insert(headers.index(b"X-Folded: a") + 1, b" b")
    ending = CRLF
    if rng.random() < 0.03:
        ending = b"\n"
        classes.append("line:bare-lf")
    data = ending.join([line, *headers]) + ending + ending + body
    if rng.random() < 0.02:
        data = CRLF + data
        classes.append("line:leading-crlf")
    pipelined = not close and rng.random() < 0.25
    follow = "GET"
    if pipelined:
        if rng.random() < 0.2:
            follow = "HEAD"
            data += FOLLOW_UP_HEAD
        else:
            data += FOLLOW_UP
        # a HEAD on either side is its own class: a HEAD's answer has no body, so its framing differs
        classes.append("pipelined:head" if "HEAD" in (method, follow) else "pipelined")
    return Case(index, tuple(sorted(classes)), data, method, pipelined, close, asked, follow)
