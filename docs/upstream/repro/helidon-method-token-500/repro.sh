#!/bin/sh
# Starts Repro.java (Helidon alone) and sends request lines whose method token holds a byte that is not
# a tchar (RFC 9110), next to two other malformed request lines; prints each answer as received.
#   docs/upstream/repro/helidon-method-token-500/repro.sh [<dir of helidon-webserver 4.4.0 jars>]
# Default jar dir: services/java-helidon/target/libs (make -C services/java-helidon build). Java 21+:
# $JAVA_HOME, else scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
libs=${1:-$root/services/java-helidon/target/libs}
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18902}

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
"$java_home/bin/java" -cp "$libs/*" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; kill $pid; exit 1; }; sleep 0.25; done
send 'GET\t/hello HTTP/1.1\r\nHost: x\r\n\r\n'
send 'G@T /hello HTTP/1.1\r\nHost: x\r\n\r\n'
send 'GE\x01T /hello HTTP/1.1\r\nHost: x\r\n\r\n'
send 'GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n'
send 'GET /hello HTTP/1.2\r\nHost: x\r\n\r\n'
kill $pid; wait $pid 2>/dev/null || true
echo "== server log (WARNING per request)"; grep -m 2 -E 'WARNING|IllegalArgumentException' "$log" || true
rm -f "$log"
