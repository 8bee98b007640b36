"""The recording/faulting proxy against a tiny local upstream (fast, loopback only)."""

import http.server
import socket
import threading
import time

import pytest

from conformance import rawhttp
from conformance.proxy import Proxy


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b'{"found":true,"_source":{"id":1}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def upstream():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def get(p, path="/city/_doc/1"):
    return rawhttp.request(("127.0.0.1", p.port), "GET", path, timeout=5, linger=0)


def test_pass_and_record(upstream):
    with Proxy(upstream) as p:
        r = get(p)
        assert r.status == 200 and b'"found":true' in r.body
        (ex,) = p.since(0)
        assert (ex.method, ex.target, ex.status, ex.relayed) == ("GET", "/city/_doc/1", 200, True)
        assert b"_source" in ex.response_body


def test_status_mode_with_match(upstream):
    with Proxy(upstream) as p:
        p.set_mode("status", 503, b'{"status":503}', match=lambda e: e.target.startswith("/region/"))
        assert get(p, "/region/_doc/1").status == 503
        assert get(p, "/city/_doc/1").status == 200


def test_refuse_and_restore(upstream):
    with Proxy(upstream) as p:
        port = p.port
        p.refuse()
        with pytest.raises(rawhttp.HttpError):
            get(p)
        p.restore()
        assert p.port == port and get(p).status == 200


def test_hold_then_release(upstream):
    with Proxy(upstream) as p:
        p.set_mode("hold")
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("r", get(p)))
        t.start()
        assert p.wait_for(lambda ex: len(ex) == 1, timeout=5)
        time.sleep(0.2)
        assert "r" not in out
        p.set_mode("pass")
        t.join(5)
        assert out["r"].status == 200


def test_reset_mode(upstream):
    with Proxy(upstream) as p:
        p.set_mode("reset")
        with pytest.raises(rawhttp.HttpError):
            get(p)


def test_delay_mode_forwards_late(upstream):
    with Proxy(upstream) as p:
        p.set_mode("delay", delay_s=0.4)
        t0 = time.monotonic()
        r = get(p)
        assert r.status == 200 and time.monotonic() - t0 >= 0.4
        p.set_mode("pass")
        t0 = time.monotonic()
        assert get(p).status == 200 and time.monotonic() - t0 < 0.4


def test_no_record(upstream):
    with Proxy(upstream, record=False) as p:
        assert get(p).status == 200
        assert p.since(0) == []


def test_refuse_resets_a_connection_that_survived(upstream):
    """A connection the proxy accepted before refuse() but did not close is reset at its next request."""
    with Proxy(upstream) as p:
        c = socket.create_connection(("127.0.0.1", p.port))
        c.sendall(b"GET /city/_doc/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"}}"):  # the answer, head and body
            first += c.recv(4096)
        assert first.startswith(b"HTTP/1.1 200")
        with p._lock:  # as if its handler had not been tracked yet when the listener closed
            p._conns.clear()
        p.refuse()
        c.sendall(b"GET /city/_doc/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            data = c.recv(4096)
        except ConnectionResetError:
            data = b""
        assert data == b""
        c.close()
        p.restore()
        assert get(p).status == 200
