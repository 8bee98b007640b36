"""The differential group: ``python -m conformance differential``.

Sends the same seeded, generated hostile requests (``hostile.py``) over raw sockets to every
implementation, groups the answers by (status, Content-Type, body, ``Allow``, whether the
connection was closed), and fails on any request where the implementations disagree, or where a
non-2xx answer is not the contract's JSON, unless the implementation's descriptor
(``differential_known``) explains that class of request for that implementation. Writes the
protocol behaviour matrix (per class of request, what each implementation answers) to
``<out>/differential-matrix.md``.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import pathlib
import shlex
import socket
import subprocess
import sys
import time

import yaml

from cityref_tools import descriptors, processes, readiness, resources
from conformance import hostile, prog
from conformance.known import entries as known_entries
from conformance.rawhttp import CRLF, HttpError, decode_chunked, parse_head
from conformance.service import SPEC_ENV

DEFAULT_SEED = 20261124
DEFAULT_COUNT = 5000
STALE_MIN = 10  # an entry whose class was sent this often must explain something


@dataclasses.dataclass(frozen=True)
class Answer:
    status: int  # 0: no response at all
    content_type: str
    body: bytes
    allow: str

    @property
    def kind(self) -> str:
        if self.status == 0:
            return "none"
        if not self.body:
            return "empty"
        return "json" if contract_json(self) else "other"

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


def _answer_end(data: bytes, method: str) -> tuple[Answer, int] | None:
    """The first complete answer in ``data`` and where it ends, or None if incomplete."""
    sep = data.find(CRLF + CRLF)
    if sep < 0:
        return None
    status, _, headers = parse_head(data[:sep])
    lower = {}
    for k, v in headers:
        lower.setdefault(k.lower(), v)
    start = sep + 4
    ct, allow = lower.get("content-type", ""), lower.get("allow", "")
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Answer(status, ct, b"", allow), start
    if "chunked" in lower.get("transfer-encoding", "").lower():
        decoded = decode_chunked(data[start:])
        if decoded is None:
            return None
        body, rest = decoded
        return Answer(status, ct, body, allow), len(data) - len(rest)
    if "content-length" in lower:
        n = int(lower["content-length"])
        if len(data) < start + n:
            return None
        return Answer(status, ct, data[start : start + n], allow), start + n
    return None  # delimited by the close


def exchange(addr: tuple[str, int], case: hostile.Case, timeout: float, linger: float) -> Outcome:
    want = 2 if case.pipelined else 1
    methods = [case.method, "GET"]
    try:
        sock = socket.create_connection(addr, timeout=timeout)
    except OSError as e:
        return Outcome((), True, f"connect failed: {e}")
    buf, answers, note, closed = b"", [], "", False
    deadline = time.monotonic() + timeout
    try:
        with contextlib.suppress(OSError):  # the server may answer and close before reading everything
            sock.sendall(case.data)
        while True:
            while len(answers) < want:
                try:
                    got = _answer_end(buf, methods[len(answers)])
                except (HttpError, ValueError) as e:
                    note = f"unparseable: {str(e)[:60]}"
                    got = None
                if got is None:
                    break
                answers.append(got[0])
                buf = buf[got[1] :]
            if note:
                break
            left = deadline - time.monotonic()
            if len(answers) >= want:
                left = min(left, linger)
            if left <= 0:
                if len(answers) < want:
                    note = "timeout"
                break
            sock.settimeout(left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                if len(answers) < want:
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
    if closed and len(answers) < want and buf:
        # an answer delimited by the close (no Content-Length): take the rest as its body
        sep = buf.find(CRLF + CRLF)
        try:
            status, _, headers = parse_head(buf[:sep] if sep >= 0 else buf)
            lower = {k.lower(): v for k, v in headers}
            body = buf[sep + 4 :] if sep >= 0 else b""
            answers.append(Answer(status, lower.get("content-type", ""), body, lower.get("allow", "")))
            buf = b""
        except HttpError:
            note = note or f"unparseable: {buf[:40]!r}"
    if buf.strip() and not note and closed:
        note = f"{len(buf)} bytes after the answers"
    return Outcome(tuple(answers), closed, note)


# ---------------------------------------------------------------- the fixed cases

WIRE_CASES = resources.path("conformance/wire-cases.yaml")


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor(
    "!pad", lambda loader, node: (lambda a: a[0] + a[1] * a[2] + a[3])(loader.construct_sequence(node))
)


def load_wire_cases(path: pathlib.Path = WIRE_CASES) -> list[dict]:
    cases = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    for c in cases:
        if set(c) - {"id", "class", "send", "expect", "closed", "allow"} or not {
            "id",
            "class",
            "send",
            "expect",
            "closed",
        } <= set(c):
            raise ValueError(f"{path}: bad case {c.get('id')!r}")
        c["data"] = c["send"].encode("utf-8")
    return cases


def wire_case_problem(case: dict, o: Outcome) -> str | None:
    """Why ``o`` is not what the fixed case expects, or None."""
    expect = case["expect"]
    if len(o.answers) != len(expect):
        return f"{len(o.answers)} answers, expected {len(expect)}"
    for i, (a, e) in enumerate(zip(o.answers, expect, strict=True)):
        if a.status != e["status"]:
            return f"answer {i + 1}: status {a.status}, expected {e['status']}"
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
        if i == 0 and "allow" in case and a.allow != case["allow"]:
            return f"Allow {a.allow!r}, expected {case['allow']!r}"
    if o.closed != case["closed"]:
        return "connection closed" if o.closed else "connection kept open"
    return None


def run_wire_cases(targets, known, timeout: float, linger: float) -> tuple[list[str], set]:
    problems, used = [], set()
    for case in load_wire_cases():
        method = case["send"].lstrip("\r\n").split(" ", 1)[0]
        # a malformed HEAD is answered with its body (the spec): read it like a GET's
        parse_as = "GET" if method == "HEAD" and "message" in case["expect"][0] else method
        hc = hostile.Case(-1, (case["class"],), case["data"], parse_as, pipelined=len(case["expect"]) > 1)
        for t in targets:
            why = wire_case_problem(case, exchange(t.addr, hc, timeout, linger))
            if why is None:
                continue
            if case["class"] in known.get(t.name, {}):
                used.add((t.name, case["class"]))
                continue
            problems.append(f"{t.name}: {case['id']}: {why}")
    return problems, used


# ---------------------------------------------------------------- known failures


def load_known(extra: dict[str, pathlib.Path] | None = None) -> dict[str, dict[str, str]]:
    """{implementation: {class: reason}}: each descriptor's `differential_known`, and for an
    implementation outside this repository the same key in the file given as --known NAME=PATH."""
    out: dict[str, dict[str, str]] = {}
    for path in descriptors.paths():
        name = descriptors.load(path)["name"]
        out[name] = known_entries(path, "differential_known", "class")
    for name, path in (extra or {}).items():
        out[name] = known_entries(path, "differential_known", "class")
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
    env = {k: v for k, v in os.environ.items() if k not in SPEC_ENV}
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


# ---------------------------------------------------------------- the comparison


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


def run(
    targets: list[Target],
    cases: list[hostile.Case],
    known: dict[str, dict[str, str]],
    workers: int,
    timeout: float,
    linger: float,
) -> tuple[dict, dict]:
    names = [t.name for t in targets]
    results: dict[int, dict[str, Outcome]] = {c.index: {} for c in cases}
    jobs = [(c, t) for c in cases for t in targets]
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(exchange, t.addr, c, timeout, linger): (c.index, t.name) for c, t in jobs}
        for f in concurrent.futures.as_completed(futures):
            i, name = futures[f]
            results[i][name] = f.result()
    return results, {"names": names}


RECHECK_LINGER = 2.0  # seconds a re-checked exchange waits for the close


def recheck_slow_closes(
    targets: list[Target],
    cases: list[hostile.Case],
    results: dict[int, dict[str, Outcome]],
    known: dict[str, dict[str, str]],
    timeout: float,
) -> int:
    """Exchanges that got the majority's answers but saw the connection still open after the short
    linger, where the majority saw it closed, and that no descriptor explains, are sent once more,
    alone, waiting up to RECHECK_LINGER s for the close. With 5 services and the parallel workers
    on 2 CPUs, a close can come later than the 0.2 s linger; a service that keeps the connection
    open still deviates. Returns how many were sent again."""
    by_name = {t.name: t for t in targets}
    names = [t.name for t in targets]
    again = 0
    for c in cases:
        res = results[c.index]
        base = consensus(res, c.method, names)
        for n, o in list(res.items()):
            if o == base or o.answers != base.answers or o.closed or not base.closed:
                continue
            if explained(n, c, known, set()):
                continue
            res[n] = exchange(by_name[n].addr, c, timeout, RECHECK_LINGER)
            again += 1
    return again


def explained(name: str, case: hostile.Case, known: dict[str, dict[str, str]], used: set) -> bool:
    for cls in case.classes:
        if cls in known.get(name, {}):
            used.add((name, cls))
            return True
    return False


def matrix(cases: list[hostile.Case], results: dict[int, dict[str, Outcome]], names: list[str]) -> str:
    by_class: dict[str, list[hostile.Case]] = collections.defaultdict(list)
    for c in cases:  # one row per class, from the requests that carry that class alone
        alone = [x for x in c.classes if x != "pipelined"]
        if len(alone) <= 1:
            by_class[alone[0] if alone else ("pipelined" if c.pipelined else "plain")].append(c)
    lines = [
        "| class of request | sent | all agree | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for cls in sorted(by_class):
        cs = by_class[cls]
        agree = sum(len(set(results[c.index].values())) == 1 for c in cs)
        cells = []
        for n in names:
            counter = collections.Counter(cell(results[c.index][n]) for c in cs)
            top = counter.most_common(2)
            text = "; ".join(f"{k} {v * 100 // len(cs)} %" for k, v in top)
            if len(counter) > 2:
                text += "; …"
            cells.append(text)
        lines.append(f"| `{cls}` | {len(cs)} | {agree * 100 // len(cs)} % | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cell(o: Outcome) -> str:
    """One outcome in a few characters: 400 json ✕ (closed), 200 json, 400 text, –."""
    if not o.answers:
        return "–" + (" ✕" if o.closed else " (hang)")
    first = o.answers[0]
    kind = {"json": "json", "empty": "empty", "other": "text", "none": "–"}[first.kind]
    if first.status < 300 and kind == "json":
        kind = ""
    text = f"{first.status} {kind}".strip()
    if len(o.answers) > 1:
        text += f"+{o.answers[1].status}"
    return text + (" ✕" if o.closed else "")


def report(cases, results, names, known, out: pathlib.Path, seed: int, used: set) -> int:
    failures: dict[tuple, list[int]] = collections.defaultdict(list)
    nonjson: dict[tuple, list[int]] = collections.defaultdict(list)
    disagreements = 0
    for c in cases:
        res = results[c.index]
        base = consensus(res, c.method, names)
        if len(set(res.values())) > 1:
            disagreements += 1
        for n in names:
            o = res[n]
            if o != base and not explained(n, c, known, used):
                failures[(n, c.label, o.short(), base.short())].append(c.index)
            if error_not_json(o, c.method) and not explained(n, c, known, used):
                nonjson[(n, c.label, o.short())].append(c.index)
    sent = collections.Counter(cls for c in cases for cls in c.classes)
    stale = [
        (n, cls)
        for n, entries in known.items()
        if n in names
        for cls in entries
        if sent[cls] >= STALE_MIN and (n, cls) not in used
    ]
    table = matrix(cases, results, names)
    (out / "differential-matrix.md").write_text(
        f"Seed {seed}, {len(cases)} requests to each of {', '.join(names)}. Each cell: the most common answers "
        f"to that class (status, body kind: json = the contract's Error JSON, text = anything else, "
        f"empty = no body; ✕ = the server closed the connection; +N = the pipelined request's status).\n\n"
        + table
        + "\n",
        encoding="utf-8",
    )
    print(table)
    print()
    print(
        f"seed {seed}: {len(cases)} requests x {len(names)} implementations; "
        f"{disagreements} requests answered differently; "
        f"{sum(map(len, failures.values()))} undocumented deviations, "
        f"{sum(map(len, nonjson.values()))} undocumented non-JSON error bodies, {len(stale)} stale entries"
    )
    for title, groups in (
        ("undocumented deviations (implementation, classes, its answer, the majority's)", failures),
        ("undocumented non-JSON error bodies", nonjson),
    ):
        if groups:
            print(f"\n{title}:")
            for key, idx in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:60]:
                print(f"  {len(idx):5}x  {' | '.join(key)}   e.g. --seed {seed} --index {idx[0]}")
            if len(groups) > 60:
                print(f"  ... and {len(groups) - 60} more patterns")
    for n, cls in stale:
        print(f"stale known-failure entry: {n}: {cls} (sent {sent[cls]} times, every answer agreed)")
    return 1 if failures or nonjson or stale else 0


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
        help="an implementation that is already running, repeatable",
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
    p.add_argument("--workers", type=int, default=64, help="connections in flight (%(default)s)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an answer (%(default)s)")
    p.add_argument(
        "--linger", type=float, default=0.2, help="seconds to wait for the close after the last answer (%(default)s)"
    )
    p.add_argument(
        "--out",
        default=str(resources.default_out("conformance")),
        help="where differential-matrix.md goes (%(default)s)",
    )
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
    targets = [Target(*b.split("=", 1)) for b in args.base_url]
    try:
        known = load_known({n: pathlib.Path(path) for n, _, path in (k.partition("=") for k in args.known)})
    except ValueError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    count = max(args.index) + 1 if args.index else args.count
    cases = hostile.generate(args.seed, count)
    if args.index:
        cases = [cases[i] for i in args.index]
    try:
        targets += [start_service(n, args.es_url, out) for n in names]
        for spec in args.command:
            name, _, command = spec.partition("=")
            targets.append(start_command(name, shlex.split(command), pathlib.Path.cwd(), args.es_url, out))
        for t in targets:
            wait_ready(t)
        if not targets:
            print("no implementation: give --service or --base-url", file=sys.stderr)
            return 2
        t0 = time.monotonic()
        wire_problems, wire_used = (
            ([], set()) if args.index else run_wire_cases(targets, known, args.timeout, args.linger)
        )
        results, _ = run(targets, cases, known, args.workers, args.timeout, args.linger)
        rechecked = recheck_slow_closes(targets, cases, results, known, args.timeout)
        if rechecked:
            print(
                f"re-checked {rechecked} exchange(s) whose close came after the {args.linger:g} s linger "
                f"(alone, waiting up to {RECHECK_LINGER:g} s)"
            )
        elapsed = time.monotonic() - t0
    finally:
        for t in targets:
            stop(t)
    tnames = [t.name for t in targets]
    if args.index:
        for c in cases:
            print(f"#{c.index} [{c.label}] {c.data[:600]!r}")
            for n in tnames:
                print(f"  {n:14} {results[c.index][n].short()}")
        return 0
    rc = report(cases, results, tnames, known, out, args.seed, wire_used)
    n_wire = len(load_wire_cases())
    print(f"fixed cases (wire-cases.yaml): {n_wire} x {len(tnames)}, {len(wire_problems)} failed")
    for p in wire_problems:
        print(f"  {p}")
    rc = rc or (1 if wire_problems else 0)
    print(f"{len(cases) * len(targets)} exchanges in {elapsed:.1f}s; matrix: {out / 'differential-matrix.md'}")
    return rc
