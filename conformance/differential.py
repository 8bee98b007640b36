"""The differential group: ``python -m conformance differential``.

Sends fixed and generated hostile requests over raw sockets to every implementation and checks the
two tiers of the spec's "What the HTTP layer accepts":

* **Safety, asserted for each implementation alone**: the fixed cases of ``wire-cases.yaml``
  (pipelining, framing and smuggling, HTTP/1.0, ``Connection: close``, sizes, multi-MiB heads with
  the process's memory watched) and, for every generated request (``hostile.py``), no 5xx, no hang,
  no answer to bytes that were not a request, ``Connection: close`` honoured, every well-formed
  request answered.
* **The application tier**: a generated request that carries only well-formed classes reaches the
  application, so every implementation must give it the same first answer (and errors are the
  contract's JSON).
* **Native, reported**: for every other class, what each framework does by itself, written as the
  protocol matrix (``<out>/differential-matrix.md``; ``--publish PATH`` writes the published page).

A failure is excused only by the implementation's ``differential_known`` entry for its class, which
must carry a standalone reproduction and an upstream report (``known.py``).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import fnmatch
import json
import os
import pathlib
import re
import shlex
import socket
import subprocess
import sys
import time

import yaml

from cityref_tools import descriptors, prerequisites, processes, readiness, resources
from conformance import grammar, hostile, prog
from conformance.elastic import elasticsearch_missing
from conformance.known import differential_entries
from conformance.rawhttp import CRLF, HttpError, decode_chunked, parse_head
from conformance.service import inherited

DEFAULT_SEED = 20261124
DEFAULT_COUNT = 5000
STALE_MIN = 10  # an entry whose class was sent this often must excuse something
FRAMEWORK_MESSAGES = frozenset(
    {"Bad Request: malformed request.", "Request Header Fields Too Large: header section exceeds 65536 bytes."}
)
RESOURCE_TIMEOUT = 30.0  # seconds for a case that sends tens of MiB
VERSION_CLASSES = frozenset({"version:other", "version:malformed", "line:no-version"})  # 505 is native for these
CLOSE_LINGER = 1.0  # seconds a fixed case that asks for the close waits for it


@dataclasses.dataclass(frozen=True)
class Answer:
    status: int  # 0: no response at all
    content_type: str
    body: bytes
    allow: str
    # its Connection field has the `close` token (the server answers nothing more); not part of the
    # answer's identity: whether a server keeps the connection is compared elsewhere
    closes: bool = dataclasses.field(default=False, compare=False)

    @property
    def kind(self) -> str:
        if self.status == 0:
            return "none"
        if not self.body:
            return "empty"
        return "json" if contract_json(self) else "other"

    @property
    def message(self) -> str | None:
        return json.loads(self.body)["message"] if self.kind == "json" else None

    def short(self) -> str:
        if self.status == 0:
            return "no answer"
        text = f"{self.status} {self.kind}"
        if self.kind == "json" and self.status >= 300:
            text += " " + json.loads(self.body)["message"][:40]
        elif self.kind == "other":
            text += f" {self.content_type or '-'} {self.body[:40]!r}"
        return text


@dataclasses.dataclass(frozen=True)
class Outcome:
    answers: tuple[Answer, ...]
    closed: bool  # the server closed the connection after its answers
    note: str = ""  # timeout, reset, unparseable bytes

    def short(self) -> str:
        text = " + ".join(a.short() for a in self.answers) or "no answer"
        if self.note:
            text += f" ({self.note})"
        return text + (", closed" if self.closed else ", kept open")


def contract_json(a: Answer) -> bool:
    if a.content_type != "application/json":
        return False
    try:
        doc = json.loads(a.body)
    except ValueError:
        return False
    return isinstance(doc, dict) and list(doc) == ["message"] and isinstance(doc["message"], str)


def city_of(a: Answer) -> int | None:
    try:
        doc = json.loads(a.body)
    except ValueError:
        return None
    return doc.get("id") if isinstance(doc, dict) else None


def error_not_json(o: Outcome, method: str) -> bool:
    """A non-2xx answer whose body (or, for HEAD, Content-Type) is not the contract's Error JSON."""
    for i, a in enumerate(o.answers):
        if a.status < 300:
            continue
        head_only = i == 0 and method == "HEAD"
        if head_only and a.content_type == "application/json" and not a.body:
            continue
        if not contract_json(a):
            return True
    return False


def _answer_end(data: bytes, method: str) -> tuple[Answer, int, int] | None:
    """The first complete answer in ``data``, where it ends, and its declared Content-Length (-1 if
    none), or None if incomplete."""
    sep = data.find(CRLF + CRLF)
    if sep < 0:
        return None
    status, _, headers = parse_head(data[:sep])
    lower = {}
    for k, v in headers:
        lower.setdefault(k.lower(), v)
    start = sep + 4
    ct, allow = lower.get("content-type", ""), lower.get("allow", "")
    closes = "close" in [t.strip().lower() for t in lower.get("connection", "").split(",")]
    declared = int(lower["content-length"]) if lower.get("content-length", "").isdigit() else -1
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Answer(status, ct, b"", allow, closes), start, declared
    if "chunked" in lower.get("transfer-encoding", "").lower():
        decoded = decode_chunked(data[start:])
        if decoded is None:
            return None
        body, rest = decoded
        return Answer(status, ct, body, allow, closes), len(data) - len(rest), declared
    if "content-length" in lower:
        n = int(lower["content-length"])
        if len(data) < start + n:
            return None
        return Answer(status, ct, data[start : start + n], allow, closes), start + n, declared
    return None  # delimited by the close


def exchange(addr: tuple[str, int], data: bytes, methods: list[str], timeout: float, linger: float) -> Outcome:
    """Sends ``data`` in one write and reads up to one answer per entry of ``methods`` (the method of
    each request sent: an answer to HEAD is read without a body), then waits ``linger`` seconds for
    the close."""
    want = len(methods)
    try:
        sock = socket.create_connection(addr, timeout=timeout)
    except OSError as e:
        return Outcome((), True, f"connect failed: {e}")
    buf, answers, note, closed = b"", [], "", False
    # A framework that refuses a HEAD it could not parse may send the refusal's body (the request was
    # not trusted to be a HEAD), framed by its Content-Length or by the close: the last answer's
    # declared length when it is such a refusal (-2: none declared), else -1.
    head_refusal = -1
    body_follows = False  # bytes after a refused HEAD are its body: read to the close, parse no more
    deadline = time.monotonic() + timeout
    try:
        with contextlib.suppress(OSError):  # the server may answer and close before reading everything
            sock.sendall(data)
        while True:
            while len(answers) < want and not body_follows:
                try:
                    got = _answer_end(buf, methods[len(answers)])
                except (HttpError, ValueError) as e:
                    if head_refusal != -1:
                        body_follows = True
                        break
                    note = f"unparseable: {str(e)[:60]}"
                    got = None
                if got is None:
                    break
                answer, end, declared = got
                refused_head = methods[len(answers)] == "HEAD" and answer.status >= 400
                head_refusal = (declared if declared >= 0 else -2) if refused_head else -1
                answers.append(answer)
                buf = buf[end:]
            if note:
                break
            left = deadline - time.monotonic()
            if len(answers) >= want and not body_follows:
                left = min(left, linger)
            if left <= 0:
                if len(answers) < want or body_follows:
                    note = "timeout"
                break
            sock.settimeout(left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                if len(answers) < want or body_follows:
                    note = "timeout"
                break
            except OSError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            buf += chunk
    finally:
        sock.close()
    if closed and buf and answers and (head_refusal == -2 or 0 < head_refusal == len(buf)):
        last = answers[-1]
        answers[-1] = Answer(last.status, last.content_type, buf, last.allow, last.closes)
        buf = b""
    if closed and len(answers) < want and buf:
        # an answer delimited by the close (no Content-Length): take the rest as its body
        sep = buf.find(CRLF + CRLF)
        try:
            status, _, headers = parse_head(buf[:sep] if sep >= 0 else buf)
            lower = {k.lower(): v for k, v in headers}
            body = buf[sep + 4 :] if sep >= 0 else b""
            answers.append(Answer(status, lower.get("content-type", ""), body, lower.get("allow", "")))
            buf = b""
            if note.startswith("unparseable"):
                note = ""
        except HttpError:
            note = note or f"unparseable: {buf[:40]!r}"
    if buf.strip() and not note:
        note = f"{len(buf)} bytes after the answers"
    return Outcome(tuple(answers), closed, note)


# ---------------------------------------------------------------- the safety tier: generated requests


def generated_problem(c: hostile.Case, o: Outcome) -> str | None:
    """Why the answer to a generated request breaks the safety tier, or None."""
    if o.note.startswith("connect failed"):
        return o.note
    if o.note == "timeout":
        return "a request left unanswered on an open connection (timeout)"
    if o.note:
        return f"answer framing: {o.note}"
    for a in o.answers:
        # 505 is the status for a version the server does not support (RFC 9110 15.6.6): native for
        # other versions, a defect for HTTP/1.0, which must be served
        # and 501 for a transfer coding the server does not implement (RFC 9112 section 6.1) or for
        # CONNECT, a method an origin server need not implement (RFC 9110 sections 9.3.6 and 15.6.2)
        if a.status >= 500 and not (
            (a.status == 505 and VERSION_CLASSES & set(c.classes))
            or (
                a.status == 501
                and (c.method == "CONNECT" or any(x.split(":")[0] in grammar.TE_SHAPES for x in c.classes))
            )
        ):
            return f"a {a.status} answer"
    if c.asked_close and o.answers and not o.closed:
        return "Connection: close not honoured"
    if hostile.well_formed(c) and not o.answers:
        return "a well-formed request got no answer"
    if len(o.answers) == 2:
        a = o.answers[1]
        if a.status != 200 or (c.follow_method == "GET" and city_of(a) != c.follow_city):
            return f"the pipelined request got {a.short()}"
    return None


# ---------------------------------------------------------------- the safety tier: fixed cases

WIRE_CASES = resources.path("conformance/wire-cases.yaml")
WIRE_KEYS = {"id", "class", "send", "methods", "expect", "allow", "close", "closing", "refused", "memory"}


class _Loader(yaml.SafeLoader):
    pass


def _pad(loader, node) -> str:
    """!pad [text, fill, count, text, ...]: a string followed by a count is repeated that often."""
    items, out, i = loader.construct_sequence(node), [], 0
    while i < len(items):
        if i + 1 < len(items) and isinstance(items[i + 1], int):
            out.append(items[i] * items[i + 1])
            i += 2
        else:
            out.append(items[i])
            i += 1
    return "".join(out)


_Loader.add_constructor("!pad", _pad)


def load_wire_cases(path: pathlib.Path = WIRE_CASES) -> list[dict]:
    cases = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    for c in cases:
        if set(c) - WIRE_KEYS or not {"id", "class", "send"} <= set(c) or ("expect" in c) == bool(c.get("refused")):
            raise ValueError(f"{path}: bad case {c.get('id')!r} (exactly one of expect and refused)")
        c["data"] = c["send"].encode("utf-8")
        c.setdefault("methods", ["GET"] * len(c.get("expect", [None])))
        if c.get("expect") and len(c["methods"]) != len(c["expect"]):
            raise ValueError(f"{path}: {c['id']}: one method per expected answer")
    return cases


def _answer_problem(i: int, a: Answer, e: dict, method: str) -> str | None:
    if a.status != e["status"]:
        return f"answer {i + 1}: status {a.status}, expected {e['status']}"
    if method == "HEAD":
        return None  # read without a body: a body would have broken the next answer
    if a.content_type != "application/json":
        return f"answer {i + 1}: Content-Type {a.content_type!r}"
    try:
        doc = json.loads(a.body)
    except ValueError:
        return f"answer {i + 1}: body is not JSON: {a.body[:60]!r}"
    if "message" in e and doc != {"message": e["message"]}:
        return f"answer {i + 1}: body {a.body[:80]!r}"
    if "city" in e and (not isinstance(doc, dict) or doc.get("id") != e["city"]):
        return f"answer {i + 1}: not city {e['city']}: {a.body[:80]!r}"
    return None


def wire_case_problem(case: dict, o: Outcome) -> str | None:
    """Why ``o`` breaks the fixed case's safety rule, or None."""
    if o.note.startswith("connect failed"):
        return o.note
    if case.get("refused"):
        if o.note == "timeout" or not o.closed:
            return "not refused: the connection stayed open"
        if len(o.answers) > 1:
            return f"{len(o.answers)} answers to one refused request"
        if o.answers and not 400 <= o.answers[0].status < 500:
            return f"answered {o.answers[0].status}, expected a 4xx refusal or none"
        return None
    if o.note == "timeout":
        return f"{len(o.answers)} answers, then the connection hung (timeout)"
    if o.note:
        return f"answer framing: {o.note}"
    expect = case["expect"]
    first = o.answers[0] if o.answers else None
    if case.get("closing") and o.closed:
        if (
            first is not None
            and len(o.answers) == 1
            and 400 <= first.status < 500
            and first.status != expect[0]["status"]
        ):
            return None  # refused, and the connection closed
        expect = expect[: len(o.answers)]  # a prefix of the answers, then the close
        if not expect:
            return "closed without an answer"
    elif o.closed and o.answers and o.answers[-1].closes and len(o.answers) < len(expect):
        # The server announced the close on its last answer and closed (RFC 9112 9.6: it answers
        # nothing more); the requests behind it are unanswered, and a client retries them.
        expect = expect[: len(o.answers)]
    if len(o.answers) != len(expect):
        return f"{len(o.answers)} answers, expected {len(expect)}"
    for i, (a, e) in enumerate(zip(o.answers, expect, strict=True)):
        why = _answer_problem(i, a, e, case["methods"][i])
        if why:
            return why
    if "allow" in case and first is not None and first.allow != case["allow"]:
        return f"Allow {first.allow!r}, expected {case['allow']!r}"
    if case.get("close") and not o.closed:
        return "Connection: close not honoured"
    return None


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (Linux /proc), 0 if gone."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children[int(fields[1])].append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        with contextlib.suppress(OSError):
            for line in pathlib.Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


@dataclasses.dataclass
class FixedResult:
    case: dict
    target: str
    outcome: Outcome
    problem: str | None


def run_wire_cases(targets, timeout: float, linger: float) -> list[FixedResult]:
    """Every fixed case against every target, one at a time (the memory cases measure the process)."""
    out = []
    for case in load_wire_cases():
        wait = RESOURCE_TIMEOUT if case.get("memory") or len(case["data"]) > 1 << 20 else timeout
        for t in targets:
            pid = t.proc.pid if t.proc is not None else None
            before = tree_rss(pid) if case.get("memory") and pid else 0
            o = exchange(t.addr, case["data"], case["methods"], wait, CLOSE_LINGER if case.get("close") else linger)
            why = wire_case_problem(case, o)
            if why is None and before:
                time.sleep(0.5)
                grown = tree_rss(pid) - before
                if grown > len(case["data"]) // 2:
                    why = f"resident memory grew by {grown >> 20} MiB for {len(case['data']) >> 20} MiB sent"
            if why is None and t.proc is not None and t.proc.poll() is not None:
                why = f"the service exited ({t.proc.returncode})"
            out.append(FixedResult(case, t.name, o, why))
    return out


# ---------------------------------------------------------------- targets


@dataclasses.dataclass
class Target:
    name: str
    url: str
    proc: subprocess.Popen | None = None

    @property
    def addr(self) -> tuple[str, int]:
        host, _, port = self.url[len("http://") :].rstrip("/").rpartition(":")
        return host, int(port)


def start_service(name: str, es_url: str, out: pathlib.Path) -> Target:
    path = descriptors.path_of(name)
    desc = descriptors.load(path)
    return start_command(desc["name"], [str(a) for a in desc["command"]], path.parent, es_url, out)


def start_command(name: str, argv: list[str], cwd: pathlib.Path, es_url: str, out: pathlib.Path) -> Target:
    port = processes.free_port()
    env = {k: v for k, v in os.environ.items() if inherited(k)}
    env.update(PORT=str(port), ELASTICSEARCH_URL=es_url, LOG_LEVEL="warn")
    with open(out / f"differential-{name}.log", "wb") as log:  # the child keeps its own descriptor
        proc = processes.start_session(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    return Target(name, f"http://127.0.0.1:{port}", proc)


def wait_ready(t: Target, seconds: float = 60) -> None:
    alive = (lambda: t.proc.poll() is None) if t.proc is not None else (lambda: True)
    if (
        readiness.first_response(t.url + "/city/v1/get?id=1&language=en", time.time() + seconds, alive, poll=0.2)
        is None
    ):
        if t.proc is not None and t.proc.poll() is not None:
            raise RuntimeError(f"{t.name} exited with {t.proc.returncode} before answering")
        raise RuntimeError(f"{t.name} did not answer at {t.url} within {seconds:.0f}s")


def stop(t: Target) -> None:
    if t.proc is not None:
        processes.stop_group(t.proc)


# ---------------------------------------------------------------- known failures


def load_known(extra: dict[str, pathlib.Path] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """{implementation: {class: entry}}: each descriptor's `differential_known`, and for an
    implementation outside this repository the same key in the file given as --known NAME=PATH."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for path in descriptors.paths():
        out[descriptors.load(path)["name"]] = differential_entries(path)
    for name, path in (extra or {}).items():
        out[name] = differential_entries(path)
    return out


# ---------------------------------------------------------------- the generated requests


def consensus(outcomes: dict[str, Outcome], method: str, order: list[str]) -> Outcome:
    """The most common outcome; a tie goes to the group whose errors are JSON, then to the first listed."""
    groups = collections.Counter(outcomes.values())
    return max(
        groups,
        key=lambda o: (
            groups[o],
            not error_not_json(o, method),
            -min(order.index(n) for n, x in outcomes.items() if x == o),
        ),
    )


def exchange_all(jobs: list[tuple[hostile.Case, Target]], workers: int, timeout: float, linger: float) -> dict:
    """{(case index, implementation): Outcome} for every (case, target) of ``jobs``, at most ``workers``
    exchanges in flight."""
    with concurrent.futures.ThreadPoolExecutor(max(1, min(workers, len(jobs)))) as pool:
        futures = {
            pool.submit(exchange, t.addr, c.data, c.methods, timeout, linger): (c.index, t.name) for c, t in jobs
        }
        return {futures[f]: f.result() for f in concurrent.futures.as_completed(futures)}


def run(targets: list[Target], cases: list[hostile.Case], workers: int, timeout: float, linger: float) -> dict:
    """{case index: {implementation: Outcome}}, ``workers`` exchanges in flight."""
    results: dict[int, dict[str, Outcome]] = {c.index: {} for c in cases}
    for (i, name), o in exchange_all([(c, t) for c in cases for t in targets], workers, timeout, linger).items():
        results[i][name] = o
    return results


RECHECK_LINGER = 2.0  # seconds a re-checked exchange waits for the close


def recheck_slow_closes(
    targets: list[Target],
    cases: list[hostile.Case],
    results: dict[int, dict[str, Outcome]],
    timeout: float,
    workers: int = 64,
) -> int:
    """Exchanges whose `Connection: close` seemed not honoured within the short linger are sent once
    more after the run, each on its own connection, waiting up to RECHECK_LINGER s for the close: with
    6 services and the parallel workers on 2 CPUs a close can come later than the 0.2 s linger; a
    service that keeps the connection open still fails. They go out together (at most ``workers`` at
    a time), so that a framework that never closes costs the run RECHECK_LINGER once, not once per
    exchange. Returns how many were sent again."""
    by_name = {t.name: t for t in targets}
    again = [
        (c, by_name[n])
        for c in cases
        for n, o in results[c.index].items()
        if generated_problem(c, o) == "Connection: close not honoured"
    ]
    for (i, n), o in exchange_all(again, workers, timeout, RECHECK_LINGER).items():
        results[i][n] = o
    return len(again)


def explained(name: str, classes, known: dict[str, dict[str, dict[str, str]]], used: set) -> str:
    """The class of ``classes`` that implementation ``name``'s known entries excuse (recorded in
    ``used``), or "" when none does."""
    for cls in classes:
        key = key_for(known.get(name, {}), cls)
        if key is not None:
            used.add((name, key))
            return cls
    return ""


def matches(key: str, cls: str) -> bool:
    """Whether a known entry's or a note's class names ``cls``: the class itself, or a glob of
    classes (`target:lf@*`)."""
    return key == cls or (any(ch in key for ch in "*?[") and fnmatch.fnmatchcase(cls, key))


def key_for(keys, cls: str) -> str | None:
    """The key of a known entry or a note that names ``cls``: its own, else the first glob that
    matches it, else None."""
    if cls in keys:
        return cls
    return next((k for k in keys if matches(k, cls)), None)


# ---------------------------------------------------------------- the protocol matrix


def cell(o: Outcome, method: str = "GET") -> str:
    """The first answer in a few characters: `app` (the application's own answer), `400 json` (a
    refusal rendered as the contract's JSON), `400 text`, `400 empty`, `–` (no answer), `hang`; a
    pipelined request behind it that got anything but its 200 adds `+<status>` (`+–`: no answer)."""
    if not o.answers:
        return "–" if o.note != "timeout" else "hang"
    first = o.answers[0]
    head_only = method == "HEAD" and not first.body and first.content_type == "application/json"
    if first.status < 300 or head_only or (first.kind == "json" and first.message not in FRAMEWORK_MESSAGES):
        text = "app"
    else:
        text = f"{first.status} " + {"json": "json", "empty": "empty", "other": "text", "none": "–"}[first.kind]
    if len(o.answers) > 1 and o.answers[1].status != 200:
        text += f"+{o.answers[1].status}"
    return text


def summary(outcomes: list[tuple[hostile.Case, Outcome]]) -> str:
    """One matrix cell: the most common first answers (two, with their shares, when they differ), each
    with ✕ when the server closed most connections the client had not asked it to close."""
    groups: dict[str, list[tuple[hostile.Case, Outcome]]] = collections.defaultdict(list)
    for c, o in outcomes:
        groups[cell(o, c.method)].append((c, o))
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    parts = []
    for text, members in ranked[:2]:
        unasked = [o.closed for c, o in members if not c.expect_close]
        if unasked and sum(unasked) * 2 > len(unasked):
            text += " ✕"
        if len(ranked) > 1:
            text += f" {len(members) * 100 // len(outcomes)} %"
        parts.append(text)
    return "; ".join(parts) + ("; …" if len(ranked) > 2 else "")


def matrix_rows(cases, results, fixed: list[FixedResult], names: list[str], problems) -> list[tuple]:
    """(class, sent, safety cell, cells) per class: the generated requests that carry that class alone
    (and maybe a pipelined request behind), then the fixed cases."""
    by_class: dict[str, list[hostile.Case]] = collections.defaultdict(list)
    for c in cases:
        alone = [x for x in c.classes if x not in hostile.PIPELINED]
        if len(alone) <= 1:
            by_class[alone[0] if alone else ("pipelined" if c.pipelined else "plain")].append(c)
    rows = []
    for cls in sorted(by_class):
        cs = by_class[cls]
        cells = [summary([(c, results[c.index][n]) for c in cs]) for n in names]
        # a failure excused by another class belongs to that class's row
        bad = {n for c in cs for n in names if (n, c.index) in problems and problems[(n, c.index)] in ("", cls)}
        rows.append((cls, len(cs), bad, cells))
    fixed_by_class: dict[str, list[FixedResult]] = collections.defaultdict(list)
    for r in fixed:
        fixed_by_class[r.case["class"]].append(r)
    for cls in sorted(fixed_by_class):
        rs = fixed_by_class[cls]
        ids = sorted({r.case["id"] for r in rs})
        cells = []
        for n in names:
            mine = [r for r in rs if r.target == n]
            passed = len([r for r in mine if not r.problem])
            cells.append(f"{'✓' if passed == len(mine) else '✗'} {passed}/{len(mine)} pass")
        rows.append((f"{cls} (fixed: {len(ids)})", len(ids), {r.target for r in rs if r.problem}, cells))
    return rows


def matrix(rows, names: list[str], versions: dict[str, str]) -> str:
    head = [f"{n}<br>{versions.get(n, '')}".rstrip("<br>") for n in names]
    lines = ["| class of request | sent | safety | " + " | ".join(head) + " |", "|---|---|---|" + "---|" * len(names)]
    for cls, sent, bad, cells in rows:
        safety = "✓" if not bad else "✗ " + ", ".join(sorted(bad))
        lines.append(f"| `{cls}` | {sent} | {safety} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def alike(rows) -> tuple[list[tuple], dict[str, list[str]]]:
    """The rows to show, and the grammar's classes that every implementation answered alike and
    safely, by their common cell (listed after the table instead of a row each)."""
    shown, same = [], collections.defaultdict(list)
    for row in rows:
        cls, _, bad, cells = row
        if cls.split(":", 1)[0] in grammar.FAMILIES and not bad and len(set(cells)) == 1:
            same[cells[0]].append(cls)
        else:
            shown.append(row)
    return shown, dict(same)


def note_for(notes: dict[str, str], cls: str) -> str:
    """The descriptor's `native` note for a class: its own key, else the first glob key that matches
    it (`target:*@path`), else a marker that there is none yet."""
    key = key_for(notes, cls)
    return notes[key] if key is not None else "(no note in its descriptor yet)"


def matrix_notes(rows, names: list[str], notes: dict[str, dict[str, str]]) -> list[str]:
    """One line for every cell that differs from its row's majority: the framework's `native` note
    for that class from its descriptor, or a marker that it has none yet."""
    out = []
    for cls, _, _, cells in rows:
        key = cls.split(" (fixed")[0]
        tops = [re.sub(r" \d+ %$", "", c.split("; ")[0]) for c in cells]  # each cell's most common outcome
        majority = collections.Counter(tops).most_common(1)[0][0]
        for n, c, top in zip(names, cells, tops, strict=True):
            if top != majority:
                out.append(f"- `{key}`, {n} ({c}): {note_for(notes.get(n, {}), key)}")
    return out


def report(cases, results, fixed, names, known, out: pathlib.Path, seed: int, publish: pathlib.Path | None) -> int:
    used: set = set()
    safety: dict[tuple, list[int]] = collections.defaultdict(list)
    app: dict[tuple, list[int]] = collections.defaultdict(list)
    problems: dict[tuple[str, int], str] = {}  # (implementation, case index) of a safety failure: the excusing class
    for c in cases:
        res = results[c.index]
        for n in names:
            why = generated_problem(c, res[n])
            if why:
                problems[(n, c.index)] = explained(n, c.classes, known, used)
                if not problems[(n, c.index)]:
                    safety[(n, c.label, why)].append(c.index)
        if not hostile.well_formed(c):
            continue
        firsts = {n: Outcome(res[n].answers[:1], False) for n in names}
        base = consensus(firsts, c.method, names)
        for n in names:
            if firsts[n] != base and not explained(n, c.classes, known, used):
                app[(n, c.label, firsts[n].short(), base.short())].append(c.index)
            elif error_not_json(firsts[n], c.method) and not explained(n, c.classes, known, used):
                app[(n, c.label, firsts[n].short(), "the contract's JSON")].append(c.index)
    fixed_failures = []
    for r in fixed:
        if r.problem and not explained(r.target, (r.case["class"],), known, used):
            fixed_failures.append(f"{r.target}: {r.case['id']} [{r.case['class']}]: {r.problem}")
    sent = collections.Counter(cls for c in cases for cls in c.classes)
    sent.update(r.case["class"] for r in fixed if r.target == names[0])
    fixed_classes = {r.case["class"] for r in fixed}
    every_run = fixed_classes | {x for c in cases if c.index >= grammar.INDEX_BASE for x in c.classes}
    stale = [
        (n, cls)
        for n, entries in known.items()
        if n in names
        for cls, entry in entries.items()
        # a fixed or grammar class is sent every run; a generated one only by chance
        if (sum(k for x, k in sent.items() if matches(cls, x)) >= STALE_MIN or any(matches(cls, x) for x in every_run))
        and (n, cls) not in used
        and not entry.get("intermittent")
    ]
    rows, same = alike(matrix_rows(cases, results, fixed, names, problems))
    descs = {d["name"]: d for d in descriptors.all_services()} if resources.checkout() is not None else {}
    versions = {n: descs[n]["framework"] for n in names if n in descs}
    notes = {n: descs[n].get("native") or {} for n in names if n in descs}
    table = matrix(rows, names, versions)
    note_lines = matrix_notes(rows, names, notes)
    legend = (
        f"Seed {seed}, {len(cases)} generated requests"
        + (f" (the grammar's {len(grammar.classes())} classes among them)" if every_run - fixed_classes else "")
        + f" and {len({r.case['id'] for r in fixed})} fixed cases "
        f"sent to each of {', '.join(names)}. A generated row holds the requests that carry that class alone "
        "(a pipelined request may follow); a row of the grammar (`te:`, `cl.te:`, `te.cl:`, `cl:`, `chunk:`, "
        "`cl.0:`, `target:`, `pct:`, `form:`) holds its class's requests, each with city 3 pipelined behind, "
        "and is shown only where the implementations answered differently (the others are listed after "
        "the table). Each cell: the most common outcome, with its share when not all "
        "agree. `app` = the request reached the application (its answer is the contract's, identical "
        "everywhere); `400 json` = the framework refused it and the service rendered the contract's JSON "
        "through the framework's error handler; `400 text` / `400 empty` = the framework's own answer; "
        "`–` = no answer; ✕ = the connection was closed; `+404` = the pipelined request behind it got "
        "that status instead of its 200 (behind a grammar case, the smuggled request answered). "
        "Safety: ✓ = no implementation broke the safety tier on that class; ✗ names those "
        "that did. A fixed row counts the cases each implementation passed."
    )
    same_lines = [f"- {c}: " + ", ".join(f"`{x}`" for x in xs) for c, xs in sorted(same.items())]
    text = (
        legend
        + "\n\n"
        + table
        + "\n"
        + ("\nCells that differ from their row's majority:\n\n" + "\n".join(note_lines) + "\n" if note_lines else "")
        + (
            f"\nThe grammar's classes ({len(grammar.classes())}, conformance/grammar.py) that every implementation "
            f"answered alike and safely ({sum(map(len, same.values()))}), by their common answer:\n\n"
            + "\n".join(same_lines)
            + "\n"
            if same
            else ""
        )
    )
    (out / "differential-matrix.md").write_text(text, encoding="utf-8")
    if publish is not None:
        publish.write_text(PUBLISH_HEAD + text, encoding="utf-8")
    print(table)
    print()
    n_safety = sum(map(len, safety.values()))
    print(
        f"seed {seed}: {len(cases)} generated requests x {len(names)} implementations: "
        f"{n_safety} unexcused safety failures, {sum(map(len, app.values()))} unexcused application-tier "
        f"differences; fixed cases: {len(fixed)} exchanges, {len(fixed_failures)} unexcused failures; "
        f"{len(stale)} stale entries"
    )
    for title, groups in (
        ("safety failures (implementation, classes, why)", safety),
        ("application-tier differences (implementation, classes, its first answer, the majority's)", app),
    ):
        if groups:
            print(f"\n{title}:")
            for key, idx in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:60]:
                replay = f"--index {idx[0]}" if idx[0] >= grammar.INDEX_BASE else f"--seed {seed} --index {idx[0]}"
                print(f"  {len(idx):5}x  {' | '.join(key)}   e.g. {replay}")
            if len(groups) > 60:
                print(f"  ... and {len(groups) - 60} more patterns")
    if fixed_failures:
        print("\nfixed cases (wire-cases.yaml) failed:")
        for f in fixed_failures:
            print(f"  {f}")
    for n, cls in stale:
        print(f"stale known-failure entry: {n}: {cls} (excuses nothing)")
    return 1 if safety or app or fixed_failures or stale else 0


PUBLISH_HEAD = """<!-- Generated by `make protocol-matrix` (python -m conformance differential --service all
     --publish docs/protocol-matrix.md): do not edit. The notes come from each service's descriptor
     (services/<name>/cityref.yaml, key `native`). -->
# Protocol matrix: what each framework does with unusual and hostile HTTP/1.1

Every service here runs on its framework's own HTTP server and parser, configured only through the
framework's settings, error handlers and extension points (spec: "What the HTTP layer accepts").
The safety tier is asserted for every framework by `make test`; everything else is the framework's
native behaviour, shown here and not patched around. How the requests are made and checked:
[conformance/README.md](../conformance/README.md#the-differential-group-hostile-http-every-implementation-at-once).
Framework defects against the safety tier, each with a reproduction and an upstream report:
[docs/upstream/](upstream/).

"""


def select_cases(seed: int, count: int, index: list[int], cls: list[str], with_grammar: bool) -> list[hostile.Case]:
    """The generated requests of the seed and the grammar's cases, or those that --index/--class name
    (an index from grammar.INDEX_BASE on is a grammar case)."""
    if index or cls:
        generated = [i for i in index if i < grammar.INDEX_BASE]
        chosen = hostile.generate(seed, max(generated) + 1) if generated else []
        chosen = [chosen[i] for i in generated]
        return chosen + [c for c in grammar.cases() if c.index in index or set(c.classes) & set(cls)]
    return hostile.generate(seed, count) + (grammar.cases() if with_grammar else [])


def print_classes(seed: int, count: int) -> None:
    """Every class a run sends: the grammar's, the generator's and the fixed cases', with counts."""
    sent = collections.Counter(x for c in hostile.generate(seed, count) for x in c.classes)
    print(f"# generated (conformance/hostile.py, seed {seed}, {count} requests)")
    for x in sorted(hostile.CLASSES):
        print(f"{x}\t{sent[x]}")
    print("# grammar (conformance/grammar.py), once each with --grammar")
    grammar_sent = collections.Counter(x for c in grammar.cases() for x in c.classes)
    for x in grammar.classes():
        print(f"{x}\t{grammar_sent[x]}")
    print("# fixed (conformance/wire-cases.yaml)")
    for x, n in sorted(collections.Counter(c["class"] for c in load_wire_cases()).items()):
        print(f"{x}\t{n}")


def parse_args(argv):
    p = argparse.ArgumentParser(prog=prog("differential"), description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--service",
        action="append",
        default=[],
        help="an implementation of this repository to start (built already), repeatable; 'all' for every one "
        "(needs a checkout of the repository)",
    )
    p.add_argument(
        "--command",
        action="append",
        default=[],
        metavar="NAME=ARGV",
        help="start this shell-quoted command as implementation NAME (it gets PORT, ELASTICSEARCH_URL "
        "and LOG_LEVEL in its environment), repeatable",
    )
    p.add_argument(
        "--base-url",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="an implementation that is already running, repeatable (no memory checks)",
    )
    p.add_argument(
        "--known-failures",
        "--known",
        dest="known",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="known deviations of implementation NAME: the `differential_known` list of the YAML file "
        "PATH (this repository's implementations keep theirs in their descriptor), repeatable; "
        "--known is an alias",
    )
    p.add_argument("--es-url", default=os.environ.get("CITYREF_ES_URL", "http://127.0.0.1:9250"))
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed (%(default)s)")
    p.add_argument("--count", type=int, default=DEFAULT_COUNT, help="requests per implementation (%(default)s)")
    p.add_argument(
        "--index",
        type=int,
        action="append",
        default=[],
        help="replay only these requests of the seed and print every answer",
    )
    p.add_argument(
        "--class",
        dest="cls",
        action="append",
        default=[],
        help="replay only the grammar's cases of this class (conformance/grammar.py) and print every answer",
    )
    p.add_argument(
        "--grammar",
        action="store_true",
        help="also send the grammar's desync classes (conformance/grammar.py), each once, as make test and "
        "make protocol-matrix do",
    )
    p.add_argument(
        "--list-classes", action="store_true", help="print every class this run would send, with its count, and exit"
    )
    p.add_argument("--workers", type=int, default=64, help="connections in flight (%(default)s)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an answer (%(default)s)")
    p.add_argument(
        "--linger", type=float, default=0.2, help="seconds to wait for the close after the last answer (%(default)s)"
    )
    p.add_argument("--no-fixed", action="store_true", help="skip the fixed cases of wire-cases.yaml")
    p.add_argument(
        "--out",
        default=str(resources.default_out("conformance")),
        help="where differential-matrix.md goes (%(default)s)",
    )
    p.add_argument("--publish", type=pathlib.Path, help="also write the matrix as the published page PATH")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.service
    if names:
        try:
            resources.require_checkout("--service")
        except resources.ResourceError as e:
            print(e, file=sys.stderr)
            return 2
    if "all" in names:
        names = [d["name"] for d in descriptors.all_services()]
    if names or args.command:  # the services this run starts need Elasticsearch, and a JDK for a JVM service
        jvm = any(descriptors.runs_on_jvm(descriptors.load(descriptors.path_of(n))) for n in names)

        def missing():
            if jvm:
                yield prerequisites.jdk(resources.ROOT / "scripts" / "java-home.sh", jre=True)
            yield elasticsearch_missing(args.es_url)

        rc = prerequisites.check(missing())
        if rc:
            return rc
    targets = [Target(*b.split("=", 1)) for b in args.base_url]
    try:
        known = load_known({n: pathlib.Path(path) for n, _, path in (k.partition("=") for k in args.known)})
    except ValueError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if args.list_classes:
        print_classes(args.seed, args.count)
        return 0
    cases = select_cases(args.seed, args.count, args.index, args.cls, args.grammar)
    if not cases:
        print("no request matches --index/--class", file=sys.stderr)
        return 2
    try:
        targets += [start_service(n, args.es_url, out) for n in names]
        for spec in args.command:
            name, _, command = spec.partition("=")
            targets.append(start_command(name, shlex.split(command), pathlib.Path.cwd(), args.es_url, out))
        try:
            for t in targets:
                wait_ready(t)
        except RuntimeError as e:
            print(f"{e} (log: {out / f'differential-{t.name}.log'})", file=sys.stderr)
            return 1
        if not targets:
            print("no implementation: give --service or --base-url", file=sys.stderr)
            return 2
        t0 = time.monotonic()
        fixed = [] if args.index or args.no_fixed else run_wire_cases(targets, args.timeout, args.linger)
        results = run(targets, cases, args.workers, args.timeout, args.linger)
        rechecked = recheck_slow_closes(targets, cases, results, args.timeout, args.workers)
        if rechecked:
            print(
                f"re-checked {rechecked} exchange(s) whose close came after the {args.linger:g} s linger "
                f"(each on its own connection, waiting up to {RECHECK_LINGER:g} s)"
            )
        for t in targets:
            if t.proc is not None and t.proc.poll() is not None:
                print(f"{t.name} exited ({t.proc.returncode}) during the run", file=sys.stderr)
                fixed.append(
                    FixedResult({"id": "alive", "class": "resource:alive"}, t.name, Outcome((), True), "exited")
                )
        elapsed = time.monotonic() - t0
    finally:
        for t in targets:
            stop(t)
    tnames = [t.name for t in targets]
    if args.index or args.cls:
        for c in cases:
            print(f"#{c.index} [{c.label}] {c.data[:600]!r}")
            for n in tnames:
                o = results[c.index][n]
                why = generated_problem(c, o)
                print(f"  {n:14} {o.short()}" + (f"   SAFETY: {why}" if why else ""))
        return 0
    rc = report(cases, results, fixed, tnames, known, out, args.seed, args.publish)
    print(
        f"{len(cases) * len(targets)} generated exchanges in {elapsed:.1f}s; matrix: {out / 'differential-matrix.md'}"
    )
    return rc
