#!/usr/bin/env bash
# Builds the hello-world server (actix-web 4.18.1 / actix-http 3.20.0), starts it on
# 127.0.0.1:$PORT (default 18090), sends each case in ONE write on ONE connection and prints the
# raw answer (CR LF shown as \r\n, a bare LF as \n). Needs cargo and python3.
set -euo pipefail
cd "$(dirname "$0")"
PORT=${PORT:-18090}
cargo build --locked --quiet
PORT=$PORT target/debug/actix-pipelined-codec-state &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

PORT=$PORT python3 - <<'PY'
import os, socket
port = int(os.environ["PORT"])
H = "Host: x\r\n"
B = f"GET /smuggled HTTP/1.1\r\n{H}\r\n"  # 35 bytes that are a request: sent as a HEAD's body
cases = [
    ("1. HEAD /slow, then GET /fast  (expected: the HEAD answer has no body)",
     f"HEAD /slow HTTP/1.1\r\n{H}\r\nGET /fast HTTP/1.1\r\n{H}\r\n"),
    ("2. GET /slow, then HEAD /fast  (expected: the GET answer has its 12-byte body)",
     f"GET /slow HTTP/1.1\r\n{H}\r\nHEAD /fast HTTP/1.1\r\n{H}\r\n"),
    ("3. HEAD /slow, then HEAD /fast (control: both right)",
     f"HEAD /slow HTTP/1.1\r\n{H}\r\nHEAD /fast HTTP/1.1\r\n{H}\r\n"),
    ("4. GET /fast with Connection: close, then GET /fast  (expected: one answer, then the close)",
     f"GET /fast HTTP/1.1\r\n{H}Connection: close\r\n\r\nGET /fast HTTP/1.1\r\n{H}\r\n"),
    ("5. GET /slow, then GET /fast with Connection: close  (expected: no close on the first answer)",
     f"GET /slow HTTP/1.1\r\n{H}\r\nGET /fast HTTP/1.1\r\n{H}Connection: close\r\n\r\n"),
    ("6. GET /slow HTTP/1.1, then GET /fast HTTP/1.0  (expected: the first answer is HTTP/1.1)",
     f"GET /slow HTTP/1.1\r\n{H}\r\nGET /fast HTTP/1.0\r\n\r\n"),
    ("7. HEAD /slow with a 35-byte body (Content-Length), then GET /fast  (expected: the HEAD answer has no body; nothing answers /smuggled)",
     f"HEAD /slow HTTP/1.1\r\n{H}Content-Length: {len(B)}\r\n\r\n{B}GET /fast HTTP/1.1\r\n{H}\r\n"),
    ("8. HEAD /slow with the same body, then HEAD /fast (control: two heads; the body is the first HEAD's, nothing answers /smuggled)",
     f"HEAD /slow HTTP/1.1\r\n{H}Content-Length: {len(B)}\r\n\r\n{B}HEAD /fast HTTP/1.1\r\n{H}\r\n"),
]
for title, request in cases:
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(1.0)
    s.sendall(request.encode())
    answer, end = b"", "still open after 1 s"
    try:
        while chunk := s.recv(65536):
            answer += chunk
        end = "closed by the server"
    except TimeoutError:
        pass
    s.close()
    print(f"== {title}")
    text = answer.decode().replace("\r\n", "\0").replace("\n", "\\n").replace("\0", "\\r\\n\n   ")
    print("   " + text.rstrip())
    print(f"   [{end}]\n")
PY
