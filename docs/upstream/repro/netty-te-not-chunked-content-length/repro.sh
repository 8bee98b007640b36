#!/bin/sh
# Starts Repro.java (Netty's HttpServerCodec alone) and sends it requests with Content-Length: 4 and a
# Transfer-Encoding that is not chunked, then one with Transfer-Encoding: chunked (the control), each with a
# chunked body holding a request and a second request behind it in the same write; prints each answer as
# received and what the decoder handed over.
#   docs/upstream/repro/netty-te-not-chunked-content-length/repro.sh [<dir of Netty 4.2 jars>]
# Default jars: the Netty that services/kotlin-ktor builds with (Ktor 3.5.2 -> Netty 4.2.16.Final), copied
# from the local Maven repository by maven-dependency-plugin. Java 21+: $JAVA_HOME, else
# scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
export JAVA_HOME="$java_home"
port=${PORT:-18912}
log=$(mktemp)
pid=
libs_tmp=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -f "$log"; [ -z "$libs_tmp" ] || rm -rf "$libs_tmp"' EXIT
if [ $# -ge 1 ]; then
    libs=$1
else
    libs=$(mktemp -d)
    libs_tmp=$libs
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

"$java_home/bin/java" -cp "$libs/*" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
seen=$(wc -l <"$log")
decoded() { # what the server logged since the last call
    sleep 0.2
    tail -n "+$((seen + 1))" "$log" | sed 's/^/    server: /'
    seen=$(wc -l <"$log")
}
# The chunked body: one chunk of 0x23 bytes holding a whole request, then the last chunk; a second request
# follows it in the same write.
body='23\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'
start='GET /first HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n'
echo "== Content-Length: 4, Transfer-Encoding: identity"
send "${start}Transfer-Encoding: identity\r\n\r\n$body"
decoded
echo "== Content-Length: 4, Transfer-Encoding: xchunked"
send "${start}Transfer-Encoding: xchunked\r\n\r\n$body"
decoded
echo '== Content-Length: 4, Transfer-Encoding: "chunked"'
send "${start}Transfer-Encoding: \"chunked\"\r\n\r\n$body"
decoded
echo "== the control: Content-Length: 4, Transfer-Encoding: chunked"
send "${start}Transfer-Encoding: chunked\r\n\r\n$body"
decoded
