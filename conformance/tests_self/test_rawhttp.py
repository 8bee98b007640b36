"""The raw client: bytes on the wire and response parsing."""

import socket
import threading

import pytest

from conformance import rawhttp


def test_build_request_sends_target_verbatim():
    data = rawhttp.build_request("GET", "/city/v1/get?%69d=1&language=%65n+x", "127.0.0.1:1")
    assert data.startswith(b"GET /city/v1/get?%69d=1&language=%65n+x HTTP/1.1\r\nHost: 127.0.0.1:1\r\n")
    assert data.endswith(b"Connection: close\r\n\r\n")


def test_build_request_body_and_headers():
    data = rawhttp.build_request("POST", "/x", "h:1", [("Content-Type", "application/json")], b"{}")
    assert b"Content-Type: application/json\r\n" in data and b"Content-Length: 2\r\n" in data
    assert data.endswith(b"\r\n\r\n{}")


def test_build_request_rejects_non_ascii():
    with pytest.raises(ValueError):
        rawhttp.build_request("GET", b"/\xff", "h:1")
    with pytest.raises(ValueError):
        rawhttp.build_request("GET", "/a b", "h:1")


def test_parse_content_length_and_extra():
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}xx"
    r = rawhttp.parse_response(raw, "GET", eof=True)
    assert (r.status, r.body, r.extra, r.content_type) == (200, b"{}", b"xx", "application/json")


def test_parse_head_keeps_body_bytes_as_extra():
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    r = rawhttp.parse_response(raw, "HEAD", eof=True)
    assert r.body == b"" and r.extra == b"{}" and r.header("content-length") == "2"


def test_parse_chunked():
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
    r = rawhttp.parse_response(raw, "GET", eof=True)
    assert r.body == b"abcde"
    assert rawhttp.framed_complete(raw, "GET")
    assert not rawhttp.framed_complete(raw[:-4], "GET")


def test_parse_truncated_body_is_an_error():
    with pytest.raises(rawhttp.HttpError):
        rawhttp.parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", "GET", eof=True)
    with pytest.raises(rawhttp.HttpError):
        rawhttp.parse_response(b"garbage\r\n\r\n", "GET", eof=True)


def test_header_lookup_is_case_insensitive_and_keeps_duplicates():
    r = rawhttp.parse_response(
        b"HTTP/1.1 405 X\r\nallow: GET, HEAD\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n", "GET", eof=True
    )
    assert r.header("Allow") == "GET, HEAD" and r.header_all("X-A") == ["1", "2"]


def test_split_url():
    assert rawhttp.split_url("http://127.0.0.1:8080/") == ("127.0.0.1", 8080)
    with pytest.raises(ValueError):
        rawhttp.split_url("https://x")


def test_request_against_a_socket_server():
    """End to end against a one-shot server: exact bytes received, response read to the close."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    got = {}

    def serve():
        conn, _ = srv.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(4096)
        got["req"] = data
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")
        conn.close()

    t = threading.Thread(target=serve)
    t.start()
    r = rawhttp.request(srv.getsockname(), "GET", "/a?%zz=+")
    t.join()
    srv.close()
    assert got["req"].startswith(b"GET /a?%zz=+ HTTP/1.1\r\n")
    assert (r.status, r.body) == (200, b"abc")
