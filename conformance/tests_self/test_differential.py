"""Self-tests of the differential group: the generator, the exchange, the comparison."""

from __future__ import annotations

import collections
import socket
import threading

import pytest

from conformance import differential, grammar, hostile
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
        "header:websocket-keys",
        "pipelined:head",
    ):
        assert counts[cls] >= 10, cls
    assert len(counts) >= 40


SAFETY_CLASSES = {
    "pipelined",
    "pipelined:head",
    "body:content-length",
    "body:chunked",
    "body:content-length-and-chunked",
    "body:http/1.0-chunked",
    "header:websocket-keys",
    "version:http/1.0",
    "connection:close",
    "connection:close-pipelined",
    "size:served",
    "size:refused",
    "resource:method-token",
    "resource:header-line",
}


def test_the_fixed_cases_cover_the_safety_tier():
    cases = differential.load_wire_cases()
    assert {c["class"] for c in cases} == SAFETY_CLASSES
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids))
    served = next(c for c in cases if c["id"] == "size-served")
    head, _, _ = served["data"].partition(b"\r\n\r\n")
    line, _, fields = head.partition(b"\r\n")
    assert len(line.split(b" ")[1]) == 8192 and len(fields) + 2 == 16384  # the field lines with their CRLFs
    for c in cases:
        if c.get("memory"):
            assert len(c["data"]) >= 64 << 20 and c.get("refused")


def frame(data: bytes) -> list[bytes]:
    """The request targets in ``data`` by RFC 9112 framing (Content-Length or chunked)."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        out.append(head.split(b" ", 2)[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(b":") for x in head.split(b"\r\n")[1:])}
        if b"chunked" in fields.get(b"transfer-encoding", b""):
            _, rest = differential.decode_chunked(rest)
        elif b"content-length" in fields:
            rest = rest[int(fields[b"content-length"]) :]
        data = rest
    return out


def test_the_smuggling_cases_frame_as_their_expected_answers():
    for c in differential.load_wire_cases():
        if c["class"].startswith("body:") or c["class"] == "header:websocket-keys":
            targets = frame(c["data"])
            assert len(targets) == len(c["expect"]), c["id"]
            assert b"/smuggled" not in targets, c["id"]
            assert b"/smuggled" in c["data"] or c["class"] == "header:websocket-keys"


def test_a_default_run_sends_every_class_the_generator_can_produce():
    sent = collections.Counter(
        x for c in hostile.generate(differential.DEFAULT_SEED, differential.DEFAULT_COUNT) for x in c.classes
    )
    assert set(sent) <= hostile.CLASSES, set(sent) - hostile.CLASSES  # the list names every class it draws
    assert [x for x in sorted(hostile.CLASSES) if not sent[x]] == []


def test_every_class_the_grammar_can_produce_is_sent():
    sent = [c for c in differential.select_cases(1, 10, [], [], True) if c.index >= grammar.INDEX_BASE]
    assert {x for c in sent for x in c.classes} == set(grammar.classes())
    assert {x.split(":", 1)[0] for x in grammar.classes()} == grammar.FAMILIES
    assert len({c.index for c in sent}) == len(sent)
    for c in sent:  # one class each, the follow-up pipelined behind it
        assert len(c.classes) == 1 and c.pipelined and c.data.endswith(grammar.FOLLOW), c.classes


def test_every_byte_sits_at_every_position_of_the_target_raw_and_escaped():
    lines = {c.data.split(b"\r\n", 1)[0] for c in grammar.cases()}
    for position, before, after in grammar.POSITIONS:
        for b in range(256):
            assert b"GET " + before + bytes([b]) + after + b" HTTP/1.1" in lines, (position, b)
            if position in grammar.PCT_POSITIONS:
                assert b"GET " + before + b"%%%02X" % b + after + b" HTTP/1.1" in lines, (position, b)
    assert {grammar.byte_class(b) for b in range(256)} >= {"nul", "ctl", "obs-text", "unsafe", "unreserved"}


def test_every_framing_variant_is_sent_in_each_of_its_shapes():
    classes = set(grammar.classes())
    for name, _lines, kind in grammar.TE_VARIANTS:
        shapes = {"te.cl"} if kind == "ignored" else {"te", "cl.te", "te.cl"}
        assert {s for s in ("te", "cl.te", "te.cl") if f"{s}:{name}" in classes} == shapes, name
    for names, family in ((grammar.CL_VARIANTS, "cl"), (grammar.CHUNK_VARIANTS, "chunk"), (grammar.CL0_ROUTES, "cl.0")):
        assert {f"{family}:{v[0]}" for v in names} <= classes


def test_the_well_framed_grammar_cases_frame_as_two_requests_and_never_the_smuggled_one():
    for c in grammar.cases():
        if c.classes[0] in ("te:plain", "cl:plain", "chunk:plain") or c.classes[0].startswith("cl.0:"):
            targets = frame(c.data)
            assert b"/smuggled" not in targets, c.classes
            assert targets[-1] == b"/city/v1/get?id=3&language=cs", c.classes


def test_a_desync_is_a_safety_failure():
    case = next(c for c in grammar.cases() if c.classes == ("cl.te:plain",))
    city = lambda n: Answer(200, "application/json", b'{"id":%d}' % n, "")  # noqa: E731
    smuggled = Answer(404, "application/json", JSON_404, "")
    assert differential.generated_problem(case, Outcome((city(1), city(3)), False)) is None
    assert differential.generated_problem(case, Outcome((city(1),), True)) is None  # answered, then the close
    assert differential.generated_problem(case, Outcome((Answer(400, "", b"", ""),), True)) is None  # refused
    assert "404" in differential.generated_problem(case, Outcome((city(1), smuggled), False))
    assert "timeout" in differential.generated_problem(case, Outcome((city(1),), False, "timeout"))
    assert differential.generated_problem(case, Outcome((Answer(501, "", b"", ""),), True)) is None  # TE unknown
    plain = next(c for c in grammar.cases() if c.classes == ("cl:plain",))
    assert "501" in differential.generated_problem(plain, Outcome((Answer(501, "", b"", ""),), True))
    connect = next(c for c in grammar.cases() if c.classes == ("form:authority-connect",))
    assert differential.generated_problem(connect, Outcome((Answer(501, "", b"", ""),), True)) is None
    authority = next(c for c in grammar.cases() if c.classes == ("form:authority",))  # GET: no 501
    assert "501" in differential.generated_problem(authority, Outcome((Answer(501, "", b"", ""),), True))


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
    o = differential.exchange(addr, b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n", ["GET"], timeout=2, linger=0.2)
    assert o.answers == (Answer(404, "application/json", JSON_404, ""),)
    assert o.closed is close
    t.join(2)


def test_exchange_reads_a_pipelined_second_answer():
    addr, t = serve_once(http(404, JSON_404) + http(200, b'{"id":1}'), True)
    case = hostile.Case(0, ("pipelined",), b"GET /x HTTP/1.1\r\n\r\n" + hostile.FOLLOW_UP, "GET", pipelined=True)
    o = differential.exchange(addr, case.data, case.methods, timeout=2, linger=0.2)
    assert [a.status for a in o.answers] == [404, 200]
    t.join(2)


def test_a_refused_head_may_carry_its_body():
    addr, t = serve_once(http(400, JSON_400), True)
    o = differential.exchange(addr, b"HEAD\t/ HTTP/1.1\r\n\r\n", ["HEAD"], timeout=2, linger=0.2)
    assert o.answers == (Answer(400, "application/json", JSON_400, ""),) and not o.note
    t.join(2)


def test_an_error_body_must_be_the_contract_json():
    ok = Outcome((Answer(400, "application/json", JSON_400, ""),), True)
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
        "class": "connection:close",
        "methods": ["GET"],
        "expect": [{"status": 405, "message": "Method Not Allowed: use GET."}],
        "allow": "GET, HEAD",
        "close": True,
    }
    m405 = b'{"message":"Method Not Allowed: use GET."}'
    good = Outcome((Answer(405, "application/json", m405, "GET, HEAD"),), True)
    assert differential.wire_case_problem(case, good) is None
    assert "Allow" in differential.wire_case_problem(
        case, Outcome((Answer(405, "application/json", m405, "GET"),), True)
    )
    assert "not honoured" in differential.wire_case_problem(case, Outcome(good.answers, False))
    assert "status 404" in differential.wire_case_problem(
        case, Outcome((Answer(404, "application/json", JSON_404, ""),), True)
    )


CITY = b'{"countryIso":"CZ","id":%d,"isFeatured":true,"name":"x","regionName":"x"}'


def city(i: int) -> Answer:
    return Answer(200, "application/json", CITY % i, "")


def test_pipelined_requests_behind_an_answer_that_announces_the_close_need_no_answer():
    """RFC 9112 9.6: a server that sends `Connection: close` answers nothing more on that connection."""
    case = {
        "id": "p",
        "class": "pipelined",
        "methods": ["GET", "GET"],
        "expect": [{"status": 404, "message": "Not Found: no such resource."}, {"status": 200, "city": 3}],
    }
    announced = Answer(404, "application/json", JSON_404, "", closes=True)
    assert differential.wire_case_problem(case, Outcome((announced,), True)) is None
    silent = Answer(404, "application/json", JSON_404, "")
    assert "1 answers, expected 2" in differential.wire_case_problem(case, Outcome((silent,), True))
    assert "1 answers, expected 2" in differential.wire_case_problem(case, Outcome((announced,), False))


def test_a_smuggling_case_is_safe_answered_in_full_or_cut_by_a_close_or_refused():
    case = {
        "id": "s",
        "class": "body:content-length",
        "methods": ["GET", "GET"],
        "expect": [{"status": 200, "city": 1}, {"status": 200, "city": 3}],
        "closing": True,
    }
    assert differential.wire_case_problem(case, Outcome((city(1), city(3)), False)) is None
    assert differential.wire_case_problem(case, Outcome((city(1),), True)) is None  # cut by the close
    refusal = Answer(400, "text/plain", b"Bad Request", "")
    assert differential.wire_case_problem(case, Outcome((refusal,), True)) is None
    assert differential.wire_case_problem(case, Outcome((refusal,), False)) is not None
    smuggled = Answer(404, "application/json", JSON_404, "")
    assert "status 404" in differential.wire_case_problem(case, Outcome((city(1), smuggled), True))
    assert "hung" in differential.wire_case_problem(case, Outcome((city(1),), False, "timeout"))
    after = Outcome((city(1), city(3)), True, "9 bytes after the answers")
    assert "after the answers" in differential.wire_case_problem(case, after)


def test_a_refused_case_wants_a_4xx_or_nothing_and_the_close():
    case = {"id": "r", "class": "size:refused", "methods": ["GET"], "refused": True}
    assert differential.wire_case_problem(case, Outcome((), True)) is None
    assert differential.wire_case_problem(case, Outcome((Answer(431, "", b"", ""),), True)) is None
    assert differential.wire_case_problem(case, Outcome((Answer(431, "", b"", ""),), False)) is not None
    assert "200" in differential.wire_case_problem(case, Outcome((city(1),), True))
    assert differential.wire_case_problem(case, Outcome((), False, "timeout")) is not None


def test_generated_requests_are_checked_for_safety_alone():
    plain = hostile.Case(0, (), b"GET / HTTP/1.1\r\n\r\n", "GET", asked_close=True)
    assert differential.generated_problem(plain, Outcome((city(1),), True)) is None
    assert "Connection: close" in differential.generated_problem(plain, Outcome((city(1),), False))
    assert "no answer" in differential.generated_problem(plain, Outcome((), True))
    assert "503" in differential.generated_problem(plain, Outcome((Answer(503, "", b"", ""),), True))
    native = hostile.Case(1, ("line:bare-lf",), b"GET / HTTP/1.1\n\n", "GET")
    assert differential.generated_problem(native, Outcome((), True)) is None  # a close is a refusal
    piped = hostile.Case(2, ("body:content-length", "pipelined"), b"...", "GET", pipelined=True)
    assert differential.generated_problem(piped, Outcome((city(3), city(1)), False)) is None
    smuggled = Outcome((city(3), Answer(404, "application/json", JSON_404, "")), False)
    assert "pipelined request" in differential.generated_problem(piped, smuggled)
    assert "unanswered" in differential.generated_problem(piped, Outcome((city(3),), False, "timeout"))


def test_the_matrix_cell_tells_the_application_from_the_framework():
    assert differential.cell(Outcome((city(1),), False)) == "app"
    assert differential.cell(Outcome((Answer(404, "application/json", JSON_404, ""),), True)) == "app"
    assert differential.cell(Outcome((Answer(404, "application/json", b"", ""),), False), "HEAD") == "app"
    assert differential.cell(Outcome((Answer(400, "application/json", JSON_400, ""),), True)) == "400 json"
    assert differential.cell(Outcome((Answer(400, "text/plain", b"Bad", ""),), True)) == "400 text"
    assert differential.cell(Outcome((city(1), city(1)), False)) == "app"
    assert differential.cell(Outcome((city(1), Answer(400, "", b"", "")), False)) == "app+400"
    assert differential.cell(Outcome((), True)) == "–"


def test_a_matrix_cell_marks_the_closes_nobody_asked_for():
    asked = hostile.Case(0, (), b"", "GET", expect_close=True)
    kept = hostile.Case(1, (), b"", "GET")
    refusal = Outcome((Answer(400, "text/plain", b"Bad", ""),), True)
    assert differential.summary([(asked, refusal), (kept, refusal)]) == "400 text ✕"
    assert differential.summary([(asked, refusal), (kept, Outcome(refusal.answers, False))]) == "400 text"
    mixed = [(kept, refusal), (kept, refusal), (kept, Outcome((city(1),), False))]
    assert differential.summary(mixed) == "400 text ✕ 66 %; app 33 %"


def test_known_deviations_need_a_reproduction_and_an_upstream_report(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text(
        "differential_known:\n  - class: version:http/1.0\n    reason: because\n"
        "    reproduction: docs/upstream/repro/x\n    upstream: docs/upstream/x.md\n"
    )
    entry = {"reason": "because", "reproduction": "docs/upstream/repro/x", "upstream": "docs/upstream/x.md"}
    assert differential.load_known({"svc": path})["svc"] == {"version:http/1.0": entry}
    path.write_text(path.read_text() + "    intermittent: true\n")
    assert differential.load_known({"svc": path})["svc"]["version:http/1.0"]["intermittent"] == "true"
    path.write_text("differential_known:\n  - class: line:bare-lf\n    reason: because\n")
    with pytest.raises(ValueError):
        differential.load_known({"svc": path})
    differential.load_known()  # every descriptor of the repository is valid


def test_the_repository_known_deviations_point_at_files_that_exist():
    from cityref_tools import descriptors
    from conformance.known import differential_entries

    for path in descriptors.paths():
        for cls, e in differential_entries(path).items():
            for field in ("reproduction", "upstream"):
                assert (descriptors.ROOT / e[field]).exists(), f"{path}: {cls}: {field} {e[field]} missing"


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


def test_a_close_after_the_linger_is_checked_again_and_a_connection_kept_open_still_fails():
    case = hostile.Case(0, (), b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "GET", asked_close=True)
    slow_host, slow_port = serve_closing_late(http(404, JSON_404), 0.6, 2)
    stays_host, stays_port = serve_closing_late(http(404, JSON_404), 30, 2)
    slow = differential.Target("slow", f"http://{slow_host}:{slow_port}")
    stays = differential.Target("stays", f"http://{stays_host}:{stays_port}")
    results = {0: {}}
    for t in (slow, stays):
        results[0][t.name] = differential.exchange(t.addr, case.data, case.methods, timeout=2, linger=0.2)
        assert not results[0][t.name].closed  # the short linger missed the close
    assert differential.recheck_slow_closes([slow, stays], [case], results, timeout=2) == 2
    assert differential.generated_problem(case, results[0]["slow"]) is None  # closed within the longer wait
    assert differential.generated_problem(case, results[0]["stays"]) == "Connection: close not honoured"


def test_a_refused_head_may_carry_a_body_delimited_by_the_close():
    answer = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request"
    addr, t = serve_once(answer, True)
    o = differential.exchange(addr, b"HEAD / HTTP/1.1\n\n" + hostile.FOLLOW_UP, ["HEAD", "GET"], timeout=2, linger=0.2)
    assert o.answers == (Answer(400, "text/plain", b"400 Bad Request", ""),) and o.closed and not o.note
    t.join(2)


def test_505_is_native_for_other_versions_and_a_defect_for_http_1_0():
    other = hostile.Case(0, ("version:other",), b"GET / HTTP/2.0\r\n\r\n", "GET")
    http10 = hostile.Case(1, ("version:http/1.0",), b"GET / HTTP/1.0\r\n\r\n", "GET")
    refused = Outcome((Answer(505, "text/plain", b"", ""),), True)
    assert differential.generated_problem(other, refused) is None
    assert "505" in differential.generated_problem(http10, refused)


def test_http_1_0_framing_that_rfc_9112_or_1945_calls_faulty_is_not_well_formed():
    chunked = hostile.Case(0, ("body:chunked", "version:http/1.0"), b"", "GET")
    post = hostile.Case(1, ("method:other", "version:http/1.0"), b"", "POST")
    delete = hostile.Case(2, ("method:other", "version:http/1.0"), b"", "DELETE")
    assert not hostile.well_formed(chunked) and not hostile.well_formed(post) and hostile.well_formed(delete)
    assert hostile.well_formed(hostile.Case(3, ("body:chunked",), b"", "GET"))


def test_a_native_note_names_its_class_or_a_glob_of_classes():
    notes = {"target:*@path": "glob", "target:nul@path": "own"}
    assert differential.note_for(notes, "target:nul@path") == "own"
    assert differential.note_for(notes, "target:unsafe@path") == "glob"
    assert "no note" in differential.note_for(notes, "target:unsafe@value")


def test_grammar_rows_answered_alike_leave_the_table():
    rows = [
        ("te:plain", 1, set(), ["app", "app"]),
        ("cl:plus-sign", 1, set(), ["app", "400 text ✕"]),
        ("te:identity", 1, {"a"}, ["app+404", "app+404"]),
        ("path:unknown", 9, set(), ["app", "app"]),
    ]
    shown, same = differential.alike(rows)
    assert [r[0] for r in shown] == ["cl:plus-sign", "te:identity", "path:unknown"]
    assert same == {"app": ["te:plain"]}


def test_a_known_entry_may_name_a_glob_of_the_grammars_classes():
    known = {"a": {"target:lf@*": {"reason": "r"}}}
    used: set = set()
    assert differential.explained("a", ("target:lf@value",), known, used) == "target:lf@value"
    assert used == {("a", "target:lf@*")}
    assert differential.explained("a", ("target:cr@value",), known, used) == ""
    assert differential.explained("b", ("target:lf@value",), known, used) == ""
    both = {"a": {"target:lf@*": {"reason": "r"}, "target:lf@end": {"reason": "r"}}}
    used = set()
    differential.explained("a", ("target:lf@end",), both, used)
    assert used == {("a", "target:lf@end")}  # its own entry before a glob, as for the notes
