"""Golden comparison and HEAD-vs-GET comparison."""

from conformance.cases import Case
from conformance.golden import compare, compare_head
from conformance.rawhttp import Response


def resp(status=200, headers=(("Content-Type", "application/json"), ("Content-Length", "2")), body=b"{}", extra=b""):
    return Response(status, "", list(headers), body, extra=extra)


def case(**kw):
    base = {"id": "c", "method": "GET", "target": b"/x", "status": 200, "body": b"{}"}
    base.update(kw)
    return Case(**base)


def test_match():
    assert compare(case(), resp()) == []


def test_each_difference_reported():
    assert any("status" in p for p in compare(case(status=404), resp()))
    assert any(
        "Content-Type" in p
        for p in compare(case(), resp(headers=[("Content-Type", "application/json; charset=utf-8")]))
    )
    assert any("body" in p for p in compare(case(body=b'{"a":1}'), resp()))
    assert any("Allow" in p for p in compare(case(headers={"Allow": "GET, HEAD"}), resp()))
    assert any("after the framed body" in p for p in compare(case(), resp(extra=b"x")))


def test_head_body_bytes_reported():
    c = case(method="HEAD", body=b"")
    assert any("HEAD response carried" in p for p in compare(c, resp(body=b"", extra=b"{}")))


def test_head_vs_get():
    get = resp(headers=[("Content-Type", "application/json"), ("Content-Length", "2"), ("Date", "a")])
    head = resp(headers=[("Content-Type", "application/json"), ("Content-Length", "2"), ("Date", "b")], body=b"")
    assert compare_head(get, head) == []
    head_no_cl = resp(headers=[("Content-Type", "application/json"), ("Date", "b")], body=b"")
    assert any("no Content-Length" in p for p in compare_head(get, head_no_cl))
    head_other = resp(headers=[("Content-Type", "text/plain"), ("Content-Length", "2")], body=b"")
    assert any("content-type" in p for p in compare_head(get, head_other))
    head_len = resp(headers=[("Content-Type", "application/json"), ("Content-Length", "7")], body=b"")
    assert compare_head(get, head_len, volatile_length=True) == []
    assert compare_head(get, head_len)
