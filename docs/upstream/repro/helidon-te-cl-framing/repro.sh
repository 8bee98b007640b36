#!/bin/sh
# Starts Repro.java (Helidon alone, GET /hello?n=... -> "hello n=...") and sends GET /hello?n=1 with one
# framing variant of Transfer-Encoding / Content-Length each, the second request GET /hello?n=2 in the same
# write; prints the bytes received and whether the server closed the connection. The body carries
# GET /smuggled (35 bytes), which is not routed: a 404 in the answers is that request answered.
#   docs/upstream/repro/helidon-te-cl-framing/repro.sh [<dir of helidon-webserver jars>]
# Default jar dir: services/java-helidon/target/libs (make -C services/java-helidon build, Helidon 4.4.0);
# give a directory of 4.4.1 or 4.5.0 jars to see the fixes. Java 21+: $JAVA_HOME, else
# scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
libs=${1:-$root/services/java-helidon/target/libs}
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18911}
for jar in "$libs"/helidon-webserver-[0-9]*.jar; do echo "Helidon: ${jar##*/}"; done

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

first='GET /hello?n=1 HTTP/1.1\r\nHost: x\r\n'
follow='GET /hello?n=2 HTTP/1.1\r\nHost: x\r\n\r\n'
smuggled='GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n'   # 35 bytes (0x23)
body='23\r\n'"$smuggled"'\r\n0\r\n\r\n'                # one chunk holding it, then the last chunk

log=$(mktemp)
"$java_home/bin/java" -cp "$libs/*" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
echo "== 1. Transfer-Encoding: chunked (the control)"
send "$first"'Transfer-Encoding: chunked\r\n\r\n'"$body$follow"
echo "== 2. Transfer-Encoding: Chunked (the same coding: names are case-insensitive)"
send "$first"'Transfer-Encoding: Chunked\r\n\r\n'"$body$follow"
echo "== 3. Transfer-Encoding: identity (not chunked: 400 or 501, then close)"
send "$first"'Transfer-Encoding: identity\r\n\r\n'"$body$follow"
echo "== 4. Content-Length: 4 before Transfer-Encoding: xchunked (cl.te)"
send "$first"'Content-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\n'"$body$follow"
echo "== 5. Transfer-Encoding: chunked and Content-Length: 40 covering the last chunk and the request (te.cl)"
send "$first"'Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n'"$smuggled$follow"
echo "== 6. Content-Length: 0, then Content-Length: 35"
send "$first"'Content-Length: 0\r\nContent-Length: 35\r\n\r\n'"$smuggled$follow"
echo "== 7. Content-Length: -1 with a chunked body"
send "$first"'Content-Length: -1\r\n\r\n'"$body$follow"
