#!/bin/sh
# Starts Repro.java (Helidon alone, GET /hello -> "hello") and sends `head` (lower case: an unknown
# method under RFC 9110, whose answer has a body) pipelined with a GET; prints the bytes received.
#   docs/upstream/repro/helidon-method-case/repro.sh [<dir of helidon-webserver 4.4.0 jars>]
# Default jar dir: services/java-helidon/target/libs (make -C services/java-helidon build). Java 21+:
# $JAVA_HOME, else scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
libs=${1:-$root/services/java-helidon/target/libs}
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18903}

send() { # $1: the bytes, as a Python bytes literal
    python3 - "$port" "$1" <<'PY'
import ast, socket, sys
port, data = int(sys.argv[1]), ast.literal_eval("b'" + sys.argv[2] + "'")
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(2); s.sendall(data)
answer = b""
try:
    while chunk := s.recv(65536): answer += chunk
except (TimeoutError, ConnectionResetError): pass
print(">>>", data); print("<<<", answer if answer else "(nothing)")
PY
}

log=$(mktemp)
"$java_home/bin/java" -cp "$libs/*" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; kill $pid; exit 1; }; sleep 0.25; done
send 'head /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n'
send 'HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n'
kill $pid; wait $pid 2>/dev/null || true
echo "== server log"; grep "method token" "$log" || true
rm -f "$log"
