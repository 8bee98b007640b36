#!/usr/bin/env bash
# scripts/profile.sh SERVICE [SECONDS] — a CPU profile of one built service under load.
#
# Starts the service bare from its cityref.yaml command on CPU 1 against the Elasticsearch of
# `make es` (fixture city 3), warms it up with wrk on CPU 0 (64 connections; WARMUP_SECONDS, default
# 90 s for a JVM — C2 on one CPU still compiles 11–31 % of the time at 30–50 s — and 30 s for a
# native binary), then profiles a SECONDS-long window (default 20) of the same load:
#   JVM services   async-profiler 4.2 (Maven Central), cpu event, 5 s chunks, window's chunks kept;
#   native ones    perf record -g (frame pointers; stripped binaries give addresses only).
# Prints req/s, the service's CPU µs per request in the window (from /proc/<pid>/stat, profiler
# overhead included) and the top frames by self and inclusive time.
# Output: out/profiles/<service>/<timestamp>/ (collapsed stacks or perf.data, wrk output).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
svc=${1:?usage: scripts/profile.sh SERVICE [SECONDS]}
seconds=${2:-20}
port=18190
url="http://127.0.0.1:$port/city/v1/get?id=3&language=de"
out="$OUT/profiles/$svc/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
command -v wrk >/dev/null || die "wrk missing (apt-get install wrk)"

argv=()   # the descriptor's command, shell-quoted by its reader
eval "argv=($(scripts/python.sh scripts/services.py get "$svc" command))"
jvm=0
[ -f "services/$svc/pom.xml" ] && jvm=1
warmup=${WARMUP_SECONDS:-$([ $jvm = 1 ] && echo 90 || echo 30)}
env_extra=()
if [ $jvm = 1 ]; then
  jar="$HOME/.m2/repository/tools/profiler/async-profiler/4.2/async-profiler-4.2-linux-x64.jar"
  if [ ! -f "$jar" ]; then
    JAVA_HOME=$(java_home) services/mvnw -B -q \
      org.apache.maven.plugins:maven-dependency-plugin:3.11.0:get \
      -Dartifact=tools.profiler:async-profiler:4.2:jar:linux-x64 >/dev/null || die "async-profiler not fetched"
  fi
  agent="$CACHE/async-profiler/linux-x64/libasyncProfiler.so"
  [ -f "$agent" ] || unzip -q -o "$jar" 'linux-x64/*' -d "$CACHE/async-profiler"
  # Continuous profiling in 5 s chunks from launch; the chunks written during the window are
  # the profile (the jar ships no asprof, and jcmd's agent_load cannot pass `key=value` options).
  env_extra=(JAVA_TOOL_OPTIONS="-agentpath:$agent=start,event=cpu,interval=1ms,loop=5s,collapsed,file=$out/chunk-%n{999}.collapsed")
fi

(cd "services/$svc" && exec env PORT=$port ELASTICSEARCH_URL=http://127.0.0.1:9250 LOG_LEVEL=warn "${env_extra[@]}" \
  taskset -c 1 "${argv[@]}") >"$out/service.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -sf -o /dev/null "$url" && break; sleep 0.05; done
curl -sf -o /dev/null "$url" || die "$svc did not answer on :$port (log: $out/service.log)"
# the JVM's own pid (run.sh execs java, so $pid is it)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
log "warm-up: ${warmup}s at 64 connections"
taskset -c 0 wrk -t1 -c64 -d"${warmup}s" "$url" >"$out/wrk-warmup.txt"
window_start=$(date +%s)
if [ $jvm = 0 ]; then
  perf record -F 999 -g -p "$pid" -o "$out/perf.data" -- sleep "$seconds" >/dev/null 2>&1 &
  perf_pid=$!
fi
c0=$(cpu)
taskset -c 0 wrk -t1 -c64 -d"${seconds}s" "$url" >"$out/wrk.txt"
c1=$(cpu)
window_end=$(date +%s)
if [ $jvm = 1 ]; then
  # chunks that ended inside the window, the first (which began in the warm-up) excluded
  find "$out" -name 'chunk-*.collapsed' -newermt "@$((window_start + 5))" ! -newermt "@$((window_end + 1))" \
    -exec cat {} + >"$out/profile.collapsed"
else
  wait "$perf_pid" || true
fi
kill -TERM $pid; wait $pid || true
trap - EXIT

requests=$(awk '/requests in/{print $1}' "$out/wrk.txt")
echo "$svc: $(grep Requests/sec "$out/wrk.txt" | tr -s ' ') ; CPU per request $(python3 -c "print(round(($c1 - $c0) * 1e4 / $requests, 1))") µs (profiler attached)"
if [ $jvm = 1 ]; then
  scripts/python.sh - "$out/profile.collapsed" <<'EOF'
import collections, sys
self_, incl, total = collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    n = int(n); frames = stack.split(";"); total += n
    self_[frames[-1]] += n
    for f in set(frames):
        incl[f] += n
for title, counter in (("self", self_), ("inclusive", incl)):
    print(f"top frames by {title} time ({total} samples):")
    for f, n in counter.most_common(15 if title == "self" else 30):
        print(f"  {100 * n / total:5.1f}%  {f[:140]}")
# Samples with a frame of each component (a sample can count for several).
COMPONENTS = {
    "JIT compiler threads": ("CompileBroker",), "GC": ("GCTaskThread", "VM_GenCollect", "SerialHeap", "DefNewGeneration"),
    "Elasticsearch client (co/elastic, org/elasticsearch)": ("co/elastic/", "org/elasticsearch/"),
    "Apache HttpAsyncClient (org/apache/http)": ("org/apache/http/",), "Jackson": ("com/fasterxml/",),
    "Micrometer": ("io/micrometer/",), "logging": ("ch/qos/logback", "java/util/logging", "org/slf4j"),
    "Netty": ("io/netty/",), "Ktor": ("io/ktor/",), "Jetty": ("org/eclipse/jetty/",), "http4k": ("org/http4k/",),
    "Helidon": ("io/helidon/",), "JSON-P": ("jakarta/json", "org/eclipse/parsson"), "cityref": ("cityref/",),
    "kernel": ("_[k]",),
}
samples = [(line.rstrip("\n").rpartition(" ")) for line in open(sys.argv[1])]
print("by component (inclusive):")
for name, marks in COMPONENTS.items():
    n = sum(int(c) for st, _, c in samples if any(m in st for m in marks))
    if n:
        print(f"  {100 * n / total:5.1f}%  {name}")
EOF
else
  for mode in --no-children --children; do
    echo "top frames ($mode):"
    perf report -i "$out/perf.data" $mode --sort symbol --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -15 | cut -c1-150
  done
fi
echo "output: $out"
