#!/bin/sh
# Starts Repro.java (Jetty 12 core alone: a ServerConnector with its defaults, idle timeout 30 s, and one
# Handler answering 200 "hello") and runs ../slow-clients against it, all at once: a trickled head (a byte
# every 2 s), a trickled head after one complete request, a request line alone, and an idle kept-alive
# connection, each watched for 40 s. Takes about 45 s after the jars are copied.
#   docs/upstream/repro/jetty-slow-head/repro.sh [<dir of Jetty 12 jars and slf4j-api>]
# Default jars: the Jetty that services/kotlin-http4k builds with (http4k 6.15.1.0's http4k-server-jetty),
# copied from the local Maven repository by maven-dependency-plugin. Java 21+: $JAVA_HOME, else
# scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
client=$here/../slow-clients/client.py
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
export JAVA_HOME="$java_home"
port=${PORT:-18924}
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$tmp"' EXIT
if [ $# -ge 1 ]; then
    libs=$1
else
    libs=$tmp/libs
    "$root/services/mvnw" -q -f "$root/services/kotlin-http4k/pom.xml" \
        org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy-dependencies \
        -DincludeGroupIds=org.eclipse.jetty,org.slf4j -DincludeScope=runtime -DoutputDirectory="$libs" >/dev/null
fi
for jar in "$libs"/jetty-server-[0-9]*.jar; do echo "Jetty: ${jar##*/}"; done

log=$tmp/log
"$java_home/bin/java" -cp "$libs/*" "$here/Repro.java" "$port" >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
grep '^listening' "$log"
echo "== slow heads, all at once, each watched 40 s"
python3 "$client" "$port" trickle-head,trickle-after-request,silent,idle-after-request /
