#!/bin/sh
# Builds Repro.kt (Ktor 3.5.2 on Netty, four routes, no cityref code) and shows, with the bytes sent
# and received:
#   1. a request Netty cannot decode: Ktor's 400 says `Connection: close`, the connection stays open,
#      and the request sent behind it is never answered (docs/upstream/ktor-netty-http1-connection.md);
#   2. `Connection: close` with a second request in the same write: answered too when the first
#      call waits (ktor-netty-http1-connection.md);
#   3. HTTP/2.0 and HTTP/0.9 in the request line over HTTP/1: answered in that version
#      (ktor-netty-http1-connection.md);
#   4. `?x=%zz` on a route whose handler never reads the query: a 400 before the handler runs
#      (ktor-query-decoded-eagerly.md);
#   5. SIGTERM while a call is in flight: stop() closes its connection without an answer
#      (ktor-netty-stop-aborts-calls.md).
#   docs/upstream/repro/ktor-netty/repro.sh
# Java 21+: $JAVA_HOME, else scripts/java-home.sh. Needs python3 and the Maven wrapper's repositories.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
export JAVA_HOME="$java_home"
port=${PORT:-18903}
out=$(mktemp -d)
# Compiled into target/ beside this script (ignored by git); the libraries into a temporary directory.
"$root/services/mvnw" -q -f "$here/pom.xml" -Dkotlin.compiler.daemon=false compile \
    org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$out/libs" >/dev/null
classes="$here/target/classes"
for jar in "$out"/libs/ktor-server-netty-jvm-*.jar "$out"/libs/netty-codec-http-[0-9]*.jar; do echo "${jar##*/}"; done

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
print(">>>", data)
for line in (answer or b"(nothing)").split(b"\r\n"): print("<<<", line)
print("   ", state)
PY
}

log=$(mktemp)
start() {
    "$java_home/bin/java" -cp "$classes:$out/libs/*" ReproKt "$port" >"$log" 2>&1 &
    pid=$!
    i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; kill $pid; exit 1; }; sleep 0.25; done
}
start
echo "== 1. a header line without a colon (Netty cannot decode it), then a good request in the same write"
send 'GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== 2. Connection: close, then a second request in the same write: first to a route that answers at once, then to one that waits 0.2 s"
send 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'
send 'GET /wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'
echo "== 3. other versions"
send 'GET / HTTP/2.0\r\nHost: x\r\nConnection: close\r\n\r\n'
send 'GET / HTTP/0.9\r\nHost: x\r\nConnection: close\r\n\r\n'
echo "== 4. an undecodable escape in a parameter the handler never reads (the control: a decodable one)"
send 'GET /ignores-query?x=%41 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
send 'GET /ignores-query?x=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
echo "== 5. SIGTERM 0.5 s into a 3 s call"
( sleep 0.5; kill -TERM $pid ) &
send 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'
wait $pid 2>/dev/null || true
grep -E '^(stopped|[a-zA-Z.]*(Exception|Error):)' "$log" | sed 's/^/server: /' || true
rm -rf "$out" "$log"
