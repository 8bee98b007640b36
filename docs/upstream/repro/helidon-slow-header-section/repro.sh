#!/bin/sh
# Starts the Helidon hello world of ../helidon-method-case (Helidon SE WebServer 4.4.0 alone, GET /hello
# -> "hello") with idle-connection-timeout PT5S and idle-connection-period PT1S (instead of 5 min / 2 min,
# so that the sweep shows within the watch), and runs ../slow-clients against it, all at once: a trickled
# head, a trickled head after one complete request, a request line alone, and an idle kept-alive
# connection (the control: closed by the sweep), each watched for 40 s. Takes about 45 s.
#   docs/upstream/repro/helidon-slow-header-section/repro.sh [<dir of helidon-webserver 4.4.0 jars>]
# Default jar dir: services/java-helidon/target/libs (make -C services/java-helidon build). Java 21+:
# $JAVA_HOME, else scripts/java-home.sh. Needs python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
libs=${1:-$root/services/java-helidon/target/libs}
client=$here/../slow-clients/client.py
java_home=${JAVA_HOME:-$("$root/scripts/java-home.sh")}
port=${PORT:-18922}
for jar in "$libs"/helidon-webserver-[0-9]*.jar; do echo "${jar##*/}"; done

log=$(mktemp)
"$java_home/bin/java" -cp "$libs/*" "$here/../helidon-method-case/Repro.java" "$port" PT5S >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
i=0; until grep -q '^listening' "$log"; do i=$((i + 1)); [ $i -lt 120 ] || { cat "$log"; exit 1; }; sleep 0.25; done
echo "== idle-connection-timeout PT5S, checked every second: slow heads, all at once, each watched 40 s"
python3 "$client" "$port" trickle-head,trickle-after-request,silent,idle-after-request /hello
