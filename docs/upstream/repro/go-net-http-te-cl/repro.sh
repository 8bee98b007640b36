#!/bin/sh
# Starts main.go (net/http alone: one hello-world handler on 127.0.0.1:$PORT, default 18913) with
# `go run .`, then sends each case in ONE write on a fresh connection and prints the answer as
# received and whether the server closed the connection within 2 s. The go command in $PATH picks the
# toolchain (go.mod says `go 1.26`); another one can be tried with e.g. GOTOOLCHAIN=go1.27.2. Needs
# go and python3.
#   docs/upstream/repro/go-net-http-te-cl/repro.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
port=${PORT:-18913}
go version

send() { # $1: the bytes, as a Python bytes literal
    python3 - "$port" "$1" <<'PY'
import ast, socket, sys
port, data = int(sys.argv[1]), ast.literal_eval("b'" + sys.argv[2] + "'")
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(2); s.sendall(data)
answer, state = b"", "still open after 2 s"
try:
    while chunk := s.recv(65536): answer += chunk
    state = "closed by the server"
except TimeoutError: pass
except ConnectionResetError: state = "reset by the server"
print(">>>", data); print("<<<", answer if answer else "(nothing)"); print("   ", state)
PY
}

log=$(mktemp)
pid=
server=
cleanup() {
    [ -z "$server" ] || kill "$server" 2>/dev/null || true
    [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -f "$log"
}
trap cleanup EXIT
PORT=$port go run . >"$log" 2>&1 &
pid=$!
# the first run compiles main.go: allow up to 2 minutes
i=0
until grep -q '^listening' "$log"; do
    i=$((i + 1))
    if [ $i -ge 480 ] || ! kill -0 "$pid" 2>/dev/null; then cat "$log"; exit 1; fi
    sleep 0.25
done
sed -n 's/^listening on \(.*\) pid [0-9]*$/server: \1/p' "$log"
server=$(sed -n 's/^listening on .* pid \([0-9]*\)$/\1/p' "$log")

# The body is 40 bytes: the last chunk `0\r\n\r\n` (5), then a 35-byte request.
echo "== Transfer-Encoding: chunked only (the control: the bytes after the last chunk are the next request)"
send 'GET /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== Transfer-Encoding: chunked and Content-Length: 40 (RFC 9112 6.1: answer, then close)"
send 'GET /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== the same, Content-Length before Transfer-Encoding"
send 'GET /first HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
