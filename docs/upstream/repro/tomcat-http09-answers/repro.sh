#!/bin/sh
# Starts Repro.java (Tomcat alone, GET /hello -> "hello") and sends three request lines: an HTTP/1.1
# one, one without a version (HTTP/0.9), and an HTTP/1.1 one with a `{` in its query; prints the
# bytes received.
#   docs/upstream/repro/tomcat-http09-answers/repro.sh [<tomcat-embed-core 11.0.22 jar>]
# Default jar: taken out of services/java-spring-boot/target/cityref-java-spring-boot.jar
# (make -C services/java-spring-boot build). Java 17+: $JAVA_HOME, else scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18904}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
jar=${1:-}
if [ -z "$jar" ]; then
    (cd "$tmp" && "$java_home/bin/jar" xf "$root/services/java-spring-boot/target/cityref-java-spring-boot.jar" \
        BOOT-INF/lib/tomcat-embed-core-11.0.22.jar)
    jar=$tmp/BOOT-INF/lib/tomcat-embed-core-11.0.22.jar
fi

send() { # $1: the bytes, as a Python bytes literal
    python3 - "$port" "$1" <<'PY'
import ast, socket, sys
port, data = int(sys.argv[1]), ast.literal_eval("b'" + sys.argv[2] + "'")
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(2); s.sendall(data)
answer = b""
try:
    while chunk := s.recv(65536): answer += chunk
except (TimeoutError, ConnectionResetError): pass
print(">>>", data); print("<<<", answer[:300] if answer else "(nothing)")
PY
}

log=$tmp/log
"$java_home/bin/java" -cp "$jar" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; kill $pid; exit 1; }; sleep 0.25; done
echo "== an invalid byte in the target of an HTTP/1.1 request line: a 400 with its status line"
send 'GET /hello?a={1} HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== a request line without a version (HTTP/0.9): the body alone"
send 'GET /hello\r\nHost: x\r\n\r\n'
echo "== the first request again, on a new connection after the HTTP/0.9 one: the 400 without its status line"
send 'GET /hello?a={1} HTTP/1.1\r\nHost: x\r\n\r\n'
send 'GET /hello?a=\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== a valid HTTP/1.1 request: served normally"
send 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n'
kill $pid; wait $pid 2>/dev/null || true
