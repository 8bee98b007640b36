#!/bin/sh
# Builds the Ktor hello world of ../ktor-netty (Ktor 3.5.2 on Netty, GET / -> "hello", no cityref code,
# the engine's defaults: no requestReadTimeoutSeconds, no idle timeout) and runs ../slow-clients against
# it: a 64 MiB body to GET / (the route never reads it), with Content-Length and then chunked; then, all
# at once, a trickled head (a byte every 2 s), a trickled head after one complete request, a request line
# alone and an idle kept-alive connection, each watched for 40 s. Takes about a minute after the build.
#   docs/upstream/repro/ktor-netty-slow-head-unread-body/repro.sh
# Java 21+: $JAVA_HOME, else scripts/java-home.sh. Needs python3 and the Maven wrapper's repositories.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
server=$here/../ktor-netty
client=$here/../slow-clients/client.py
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
export JAVA_HOME="$java_home"
port=${PORT:-18921}
out=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$out"' EXIT
# Compiled into ../ktor-netty/target (ignored by git); the libraries into a temporary directory.
"$root/services/mvnw" -q -f "$server/pom.xml" -Dkotlin.compiler.daemon=false compile \
    org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$out/libs" >/dev/null
for jar in "$out"/libs/ktor-server-netty-jvm-*.jar "$out"/libs/netty-codec-http-[0-9]*.jar; do echo "${jar##*/}"; done

log=$out/log
"$java_home/bin/java" -cp "$server/target/classes:$out/libs/*" ReproKt "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
echo "== a 64 MiB body to GET /, which never reads it"
python3 "$client" "$port" body /
echo "== the same 64 MiB as a chunked body"
python3 "$client" "$port" body-chunked /
echo "== slow heads, all at once, each watched 40 s"
python3 "$client" "$port" trickle-head,trickle-after-request,silent,idle-after-request /
