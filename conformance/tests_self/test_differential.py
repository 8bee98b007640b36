"""Self-tests of the differential group: the generator, the exchange, the comparison."""

from __future__ import annotations

import collections
import socket
import threading

import pytest

from conformance import differential, hostile
from conformance.differential import Answer, Outcome

JSON_404 = b'{"message":"Not Found: no such resource."}'
JSON_400 = b'{"message":"Bad Request: malformed request."}'


def test_a_seed_reproduces_the_requests_byte_for_byte():
    a, b = hostile.generate(7, 300), hostile.generate(7, 300)
    assert [c.data for c in a] == [c.data for c in b]
    assert [c.data for c in hostile.generate(8, 300)] != [c.data for c in a]


def test_5000_requests_cover_every_class_of_the_grammar():
    counts = collections.Counter(cls for c in hostile.generate(differential.DEFAULT_SEED, 5000) for cls in c.classes)
    for cls in (
        "version:http/1.0",
        "version:other",
        "line:double-space",
        "line:bare-lf",
        "target:raw-utf8",
        "target:raw-control",
        "header:too-large",
        "header:obs-fold",
        "body:chunked",
        "pipelined",
        "method:lower-case",
        "body:content-length-and-chunked",
        "target:raw-quote",
    ):
        assert counts[cls] >= 10, cls
    assert len(counts) >= 40


def test_every_fixed_case_names_a_class_of_the_generator():
    classes = {cls for c in hostile.generate(differential.DEFAULT_SEED, 5000) for cls in c.classes} | {"plain"}
    cases = differential.load_wire_cases()
    assert len(cases) >= 30
    for case in cases:
        assert case["class"] in classes, case["id"]
    pad = next(c for c in cases if c["id"] == "header-section-over-64k-431")
    assert len(pad["data"]) > 70000


def serve_once(answer: bytes, close: bool) -> tuple[tuple[str, int], threading.Thread]:
    listener = socket.create_server(("127.0.0.1", 0))

    def run():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(answer)
        if close:
            conn.close()
        else:
            conn.recv(65536)  # until the client gives up
            conn.close()
        listener.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return listener.getsockname(), t


def http(status: int, body: bytes, ctype: str = "application/json") -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.mark.parametrize("close", [True, False])
def test_exchange_reads_the_answer_and_sees_whether_the_connection_was_closed(close):
    addr, t = serve_once(http(404, JSON_404), close)
    case = hostile.Case(0, (), b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n", "GET")
    o = differential.exchange(addr, case, timeout=2, linger=0.2)
    assert o.answers == (Answer(404, "application/json", JSON_404, ""),)
    assert o.closed is close
    t.join(2)


def test_exchange_reads_a_pipelined_second_answer():
    addr, t = serve_once(http(404, JSON_404) + http(200, b'{"id":1}'), True)
    case = hostile.Case(0, ("pipelined",), b"GET /x HTTP/1.1\r\n\r\n" + hostile.FOLLOW_UP, "GET", pipelined=True)
    o = differential.exchange(addr, case, timeout=2, linger=0.2)
    assert [a.status for a in o.answers] == [404, 200]
    t.join(2)


def test_an_error_body_must_be_the_contract_json():
    ok = Outcome((Answer(400, "application/json", b'{"message":"Bad Request: malformed request."}', ""),), True)
    text = Outcome((Answer(400, "text/plain; charset=utf-8", b"400 Bad Request", ""),), True)
    empty = Outcome((Answer(400, "", b"", ""),), True)
    head = Outcome((Answer(404, "application/json", b"", ""),), False)
    assert not differential.error_not_json(ok, "GET")
    assert differential.error_not_json(text, "GET")
    assert differential.error_not_json(empty, "GET")
    assert not differential.error_not_json(head, "HEAD")


def test_consensus_is_the_most_common_answer_and_a_tie_goes_to_json():
    j = Outcome((Answer(400, "application/json", b'{"message":"x"}', ""),), True)
    t = Outcome((Answer(400, "text/plain", b"x", ""),), True)
    e = Outcome((Answer(400, "", b"", ""),), True)
    assert differential.consensus({"a": t, "b": j, "c": j}, "GET", ["a", "b", "c"]) == j
    assert differential.consensus({"a": t, "b": t, "c": j, "d": j, "e": e}, "GET", list("abcde")) == j


def test_a_fixed_case_checks_status_body_allow_and_close():
    case = {
        "id": "x",
        "class": "plain",
        "expect": [{"status": 405, "message": "Method Not Allowed: use GET."}],
        "allow": "GET, HEAD",
        "closed": True,
    }
    good = Outcome((Answer(405, "application/json", b'{"message":"Method Not Allowed: use GET."}', "GET, HEAD"),), True)
    assert differential.wire_case_problem(case, good) is None
    assert "Allow" in differential.wire_case_problem(
        case,
        Outcome(
            (good.answers[0].__class__(405, "application/json", b'{"message":"Method Not Allowed: use GET."}', "GET"),),
            True,
        ),
    )
    assert "kept open" in differential.wire_case_problem(case, Outcome(good.answers, False))
    assert "status 404" in differential.wire_case_problem(
        case, Outcome((Answer(404, "application/json", JSON_404, ""),), True)
    )


def test_known_deviations_need_a_class_and_a_reason(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text("differential_known:\n  - class: line:bare-lf\n    reason: because\n")
    assert differential.load_known({"svc": path})["svc"] == {"line:bare-lf": "because"}
    path.write_text("differential_known:\n  - class: line:bare-lf\n")
    with pytest.raises(ValueError):
        differential.load_known({"svc": path})
    own = differential.load_known()  # every descriptor of the repository is valid
    assert "method:lower-case" in own["java-helidon"] and own["rust-actix"] == {}


def serve_closing_late(answer: bytes, delay: float, times: int) -> tuple[str, int]:
    """Answers each of ``times`` connections, then closes it ``delay`` seconds later."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run():
        for _ in range(times):
            conn, _ = listener.accept()
            conn.recv(65536)
            conn.sendall(answer)
            closer = threading.Timer(delay, conn.close)
            closer.daemon = True
            closer.start()
        listener.close()

    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()


def test_a_close_after_the_linger_is_checked_again_and_a_connection_kept_open_still_deviates():
    case = hostile.Case(0, ("line:tab-separator",), b"GET\t/x HTTP/1.1\r\nHost: x\r\n\r\n", "GET")
    answer = (Answer(400, "application/json", JSON_400, ""),)
    slow_host, slow_port = serve_closing_late(http(400, JSON_400), 0.6, 2)
    stays_host, stays_port = serve_closing_late(http(400, JSON_400), 30, 2)
    slow = differential.Target("slow", f"http://{slow_host}:{slow_port}")
    stays = differential.Target("stays", f"http://{stays_host}:{stays_port}")
    closed = Outcome(answer, True)
    results = {0: {"a": closed, "b": closed, "slow": None, "stays": None}}
    for t in (slow, stays):
        results[0][t.name] = differential.exchange(t.addr, case, timeout=2, linger=0.2)
        assert results[0][t.name] == Outcome(answer, False)  # the short linger missed the close
    never_contacted = [differential.Target(n, "http://127.0.0.1:1") for n in ("a", "b")]
    targets = [*never_contacted, slow, stays]
    assert differential.recheck_slow_closes(targets, [case], results, {}, timeout=2) == 2
    assert results[0]["slow"] == closed  # closed within the longer wait: agrees after all
    assert results[0]["stays"] == Outcome(answer, False)  # still open: still a deviation
