#!/usr/bin/env python3
"""Slow and hostile HTTP/1.1 clients against a hello-world server on 127.0.0.1 (stdlib only).

    client.py PORT MODE[,MODE...] [PATH]

Several modes given with commas run at once, each on its own connection; one line is printed per
mode, in the order given, with the outcome and the elapsed time. PATH defaults to /.

  trickle-head           `GET PATH HTTP/1.1`, `Host: x`, then one byte of `X-Slow: aaa...` every
                         2 s, never ending the head; watched for 40 s
  trickle-after-request  one complete GET and its answer, then the next head trickled the same way
  silent                 the request line only, then nothing; watched for 40 s
  idle-after-request     one complete GET and its answer, then nothing (the control: an idle
                         kept-alive connection between two requests); watched for 40 s
  body                   a GET with `Content-Length: 67108864`, the body sent in 64 KiB writes as
                         fast as the server takes it; how much is taken before the server answers
                         or closes (20 s cap). Bytes are counted as written by this client: the two
                         kernels' socket buffers hold a few hundred KiB of them.
  body-chunked           the same 64 MiB as `Transfer-Encoding: chunked`, in 64 KiB chunks
"""

import select
import socket
import sys
import threading
import time

WATCH_S, INTERVAL_S, BODY_CAP_S = 40.0, 2.0, 20.0
BODY_BYTES, CHUNK = 64 * 1024 * 1024, 64 * 1024


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def status_line(data):
    return data.split(b"\r\n", 1)[0].decode("latin-1") if data else ""


def read_answer(s):
    """Reads one complete answer (Content-Length or chunked body); returns its status line."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed before answering the first request")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip().lower()

    def done() -> bool:  # the first answer's body has arrived
        if b"content-length" in fields:
            return len(rest) >= int(fields[b"content-length"])
        if fields.get(b"transfer-encoding") == b"chunked":
            return rest.endswith(b"0\r\n\r\n")
        return True

    while not done():
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed in the middle of the first answer")
        rest += chunk
    return status_line(head)


def watch(s, first, trickle):
    """Sends `first`, then one byte of `trickle` every INTERVAL_S, and watches the connection for
    WATCH_S: when did the server close it, and what did it send?"""
    t0 = time.monotonic()
    s.sendall(first)
    s.setblocking(False)
    sent, received, next_byte = 0, b"", t0 + INTERVAL_S
    while True:
        now = time.monotonic()
        if now >= t0 + WATCH_S:
            what = f", {sent} head bytes trickled" if trickle else ""
            got = f", received {status_line(received)!r}" if received else ""
            return f"still open after {WATCH_S:.0f} s{what}{got}"
        wake = min(next_byte, t0 + WATCH_S) if trickle else t0 + WATCH_S
        readable, _, _ = select.select([s], [], [], max(0.0, wake - now))
        try:
            if readable:
                data = s.recv(65536)
                if data:
                    received += data
                    continue
                raise ConnectionResetError
            if trickle and time.monotonic() >= next_byte:
                s.send(trickle[sent : sent + 1])
                sent += 1
                next_byte += INTERVAL_S
        except (BrokenPipeError, ConnectionResetError):
            answer = f", having sent {status_line(received)!r}" if received else ", no answer"
            return f"closed by the server after {time.monotonic() - t0:.1f} s{answer}"


def body(port, path, chunked):
    """A 64 MiB body the route never reads, with Content-Length or chunked: how much does the server take?"""
    if chunked:
        framing = b"Transfer-Encoding: chunked"
        frame, last = b"%x\r\n" % CHUNK + b"b" * CHUNK + b"\r\n", b"0\r\n\r\n"
    else:
        framing = b"Content-Length: %d" % BODY_BYTES
        frame, last = b"b" * CHUNK, b""
    pieces = iter([frame] * (BODY_BYTES // CHUNK) + [last])
    total = BODY_BYTES // CHUNK * len(frame) + len(last)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CHUNK)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n" % (path.encode(), framing))
    s.setblocking(False)
    t0 = time.monotonic()
    sent, pending, received, answered_at, all_sent_at = 0, b"", b"", None, None
    while True:
        now = time.monotonic()
        if now > t0 + BODY_CAP_S:
            outcome = f"still reading after {BODY_CAP_S:.0f} s"
            break
        if all_sent_at is not None and now > all_sent_at + 2:
            outcome = "connection still open 2 s after the last byte"
            break
        readable, writable, _ = select.select([s], [s] if sent < total else [], [], 0.5)
        try:
            if readable:
                data = s.recv(65536)
                if not data:
                    raise ConnectionResetError
                if answered_at is None:
                    answered_at = sent
                received += data
            if writable:
                pending = pending or next(pieces)
                n = s.send(pending)
                pending, sent = pending[n:], sent + n
                if sent >= total:
                    all_sent_at = time.monotonic()
        except BlockingIOError:
            pass
        except (BrokenPipeError, ConnectionResetError):
            outcome = "closed by the server"
            break
    s.close()
    took = (all_sent_at or time.monotonic()) - t0

    def mib(n):
        return f"{n / 1024 / 1024:.1f} MiB"

    close = " with Connection: close" if b"\r\nconnection: close" in received.lower() else ""
    answer = f"answered {status_line(received)!r}{close} after {mib(answered_at)}" if received else "no answer"
    return f"{mib(sent)} of {mib(total)} taken in {took:.1f} s, {answer}; {outcome}"


def run(port, mode, path):
    head = b"GET %s HTTP/1.1\r\nHost: x\r\n" % path.encode()
    trickle = b"X-Slow: " + b"a" * 100
    try:
        if mode in ("body", "body-chunked"):
            return body(port, path, chunked=mode == "body-chunked")
        s = connect(port)
        if mode == "trickle-head":
            return watch(s, head, trickle)
        if mode == "silent":
            return watch(s, head.split(b"\r\n")[0] + b"\r\n", b"")
        if mode in ("trickle-after-request", "idle-after-request"):
            s.sendall(head + b"\r\n")
            first = read_answer(s)
            rest = watch(s, head, trickle) if mode.startswith("trickle") else watch(s, b"", b"")
            return f"first request answered {first!r}; then {rest}"
        return f"unknown mode (see {sys.argv[0]} --help)"
    except OSError as e:
        return f"error: {e}"


def main():
    if len(sys.argv) < 3 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    port, modes = int(sys.argv[1]), sys.argv[2].split(",")
    path = sys.argv[3] if len(sys.argv) > 3 else "/"
    results = {}
    threads = [threading.Thread(target=lambda m=m: results.__setitem__(m, run(port, m, path))) for m in modes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for m in modes:
        print(f"{m:<22} {results[m]}")


if __name__ == "__main__":
    main()
