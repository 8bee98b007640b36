#!/bin/sh
# Starts the Tomcat hello world of ../tomcat-http09-answers (tomcat-embed-core alone, GET /hello ->
# "hello") with connectionTimeout 5000 ms (Tomcat's default is 60000; a short one shows within the watch
# that it is a per-read timeout), and runs ../slow-clients against it, all at once: a trickled head (a
# byte every 2 s), a trickled head after one complete request, a request line alone, and an idle
# kept-alive connection, each watched for 40 s. Takes about 45 s.
#   docs/upstream/repro/tomcat-slow-head/repro.sh [<tomcat-embed-core 11.0.22 jar>]
# Default jar: taken out of services/java-spring-boot/target/cityref-java-spring-boot.jar
# (make -C services/java-spring-boot build). Java 17+: $JAVA_HOME, else scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
client=$here/../slow-clients/client.py
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18923}
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$tmp"' EXIT
jar=${1:-}
if [ -z "$jar" ]; then
    (cd "$tmp" && "$java_home/bin/jar" xf "$root/services/java-spring-boot/target/cityref-java-spring-boot.jar" \
        BOOT-INF/lib/tomcat-embed-core-11.0.22.jar)
    jar=$tmp/BOOT-INF/lib/tomcat-embed-core-11.0.22.jar
fi
echo "${jar##*/}"

log=$tmp/log
"$java_home/bin/java" -cp "$jar" "$here/../tomcat-http09-answers/Repro.java" "$port" 5000 >"$log" 2>&1 &
pid=$!
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
echo "== connectionTimeout 5000 ms: slow heads, all at once, each watched 40 s"
python3 "$client" "$port" trickle-head,trickle-after-request,silent,idle-after-request /hello
