#!/bin/sh
# Starts Repro.java (Netty's HttpServerCodec alone) and sends it a GET with Sec-WebSocket-Key1/Key2 and no
# body, followed by a second request in the same write; prints each answer as received.
#   docs/upstream/repro/netty-hixie76-body/repro.sh [<dir of Netty 4.2 jars>]
# Default jars: the Netty that services/kotlin-ktor builds with (Ktor 3.5.2 -> Netty 4.2.16.Final), copied
# from the local Maven repository by maven-dependency-plugin. Java 21+: $JAVA_HOME, else
# scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
export JAVA_HOME="$java_home"
port=${PORT:-18902}
if [ $# -ge 1 ]; then
    libs=$1
else
    libs=$(mktemp -d)
    "$root/services/mvnw" -q -f "$root/services/kotlin-ktor/pom.xml" \
        org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy-dependencies \
        -DincludeGroupIds=io.netty -DincludeScope=runtime -DoutputDirectory="$libs" >/dev/null
fi
for jar in "$libs"/netty-codec-http-[0-9]*.jar; do echo "Netty: ${jar##*/}"; done

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
echo "== two GETs, no hixie-76 headers (the control)"
send 'GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== the first GET has Sec-WebSocket-Key1 and Key2 (no Upgrade, no Content-Length, no body)"
send 'GET /first HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key1: 1\r\nSec-WebSocket-Key2: 2\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== the first GET alone"
send 'GET /first HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key1: 1\r\nSec-WebSocket-Key2: 2\r\n\r\n'
echo "== the same, the second request prefixed with 8 bytes"
send 'GET /first HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key1: 1\r\nSec-WebSocket-Key2: 2\r\n\r\nAAAAAAAAGET /second HTTP/1.1\r\nHost: x\r\n\r\n'
kill $pid; wait $pid 2>/dev/null || true; rm -f "$log"
[ $# -ge 1 ] || rm -rf "$libs"
