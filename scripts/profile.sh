#!/usr/bin/env bash
# scripts/profile.sh SERVICE [SECONDS] — a CPU profile of one service's Elasticsearch path under load.
#
# Starts the service bare on CPU 1 against the Elasticsearch of `make es` (fixture city 3), warms it up
# on CPU 0 (WARMUP_SECONDS, default 90 s for a JVM — C2 on one CPU still compiles 11–31 % of the time
# at 30–50 s — and 30 s for a native binary), then profiles a SECONDS-long window (default 20) of the
# same load: 64 connections, closed loop (wrk), or with RATE=N a fixed N req/s over 64 connections
# (vegeta, as the benchmark's fixed-rate step). The profiler per ecosystem:
#   JVM services  the descriptor's command, async-profiler 4.2 (Maven Central): cpu event, 1 ms,
#                 5 s chunks from launch, the chunks written inside the window kept;
#   rust-actix    perf record -g, on a build of its own with symbols and frame pointers
#                 (CARGO_PROFILE_RELEASE_STRIP=none, -C force-frame-pointers=yes; fat LTO as shipped);
#   go-kit        pprof, on a build with `-tags pprof` (pprof.go: net/http/pprof on 127.0.0.1:6060).
# Prints req/s, the service's CPU µs per request in the window (/proc/<pid>/stat, profiler overhead
# included), its shares by component and top frames (scripts/profile_report.py), also in report.txt.
# PUBLISH=1: the profile also goes into docs/results/profiles/SERVICE.json (one per step), from which
# `make readme-table` writes the service README's profile section.
# Output: out/profiles/<service>/<timestamp>[-rate<N>]/ (stacks, the load's output, report.txt).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
svc=${1:?usage: scripts/profile.sh SERVICE [SECONDS]}
seconds=${2:-20}
port=18190
url="http://127.0.0.1:$port/city/v1/get?id=3&language=de"
rate=${RATE:-}
out="$OUT/profiles/$svc/$(date -u +%Y%m%dT%H%M%SZ)${rate:+-rate$rate}"
mkdir -p "$out"
command -v wrk >/dev/null || die "wrk missing (apt-get install wrk)"
vegeta="$CACHE/bin/vegeta"
[ -z "$rate" ] || [ -x "$vegeta" ] || scripts/bench.sh vegeta

argv=()   # the descriptor's command, shell-quoted by its reader
eval "argv=($(scripts/python.sh scripts/services.py get "$svc" command))"
jvm=0
[ -f "services/$svc/pom.xml" ] && jvm=1
warmup=${WARMUP_SECONDS:-$([ $jvm = 1 ] && echo 90 || echo 30)}
env_extra=()
case $svc in
  rust-actix)  # the shipped build's settings (its Makefile), plus symbols and frame pointers
    triple=$(rustc -vV | sed -n 's/^host: //p')
    log "building $svc with symbols and frame pointers into $CACHE/profile-target"
    (cd "services/$svc" && RUSTFLAGS="-C target-feature=+crt-static -C force-frame-pointers=yes" \
      CARGO_PROFILE_RELEASE_STRIP=none cargo --locked build -q --release --target "$triple" \
      --target-dir "$CACHE/profile-target") || die "profile build of $svc failed"
    argv=("$CACHE/profile-target/$triple/release/cityref-rust-actix") ;;
  go-kit)  # symbols kept (no -s -w) and pprof.go built in
    log "building $svc with -tags pprof into $CACHE/profile-bin"
    (cd "services/$svc" && go build -tags pprof -o "$CACHE/profile-bin/cityref-go-kit" .) || die "profile build of $svc failed"
    argv=("$CACHE/profile-bin/cityref-go-kit") ;;
esac
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
# the service's own pid (run.sh execs java, so $pid is it)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# the load, on CPU 0: LOAD SECONDS OUTPUT
load() {
  if [ -z "$rate" ]; then
    taskset -c 0 wrk -t1 -c64 -d"$1s" "$url" >"$2"
  else
    echo "GET $url" | taskset -c 0 "$vegeta" attack -rate="$rate/s" -duration="$1s" -workers=64 -max-workers=64 \
      -connections=64 -max-connections=64 | "$vegeta" report >"$2"
  fi
}
log "warm-up: ${warmup}s, ${rate:+$rate req/s over }64 connections"
load "$warmup" "$out/load-warmup.txt"
window_start=$(date +%s)
case $svc in
  rust-actix) perf record -F 999 -g -p "$pid" -o "$out/perf.data" -- sleep "$seconds" >/dev/null 2>&1 & prof=$! ;;
  go-kit) curl -sf -o "$out/cpu.pprof" "http://127.0.0.1:6060/debug/pprof/profile?seconds=$seconds" & prof=$! ;;
esac
c0=$(cpu)
load "$seconds" "$out/load.txt"
c1=$(cpu)
window_end=$(date +%s)
if [ $jvm = 1 ]; then
  # chunks that ended inside the window, the first (which began in the warm-up) excluded
  find "$out" -name 'chunk-*.collapsed' -newermt "@$((window_start + 5))" ! -newermt "@$((window_end + 1))" \
    -exec cat {} + >"$out/stacks.txt"
  format=()
else
  wait "$prof" || die "the profiler failed"
fi
kill -TERM $pid; wait $pid || true
trap - EXIT
case $svc in
  rust-actix) perf script -i "$out/perf.data" -F comm,tid,time,ip,sym,dso >"$out/stacks.txt" 2>/dev/null; format=(--perf) ;;
  go-kit) go tool pprof -traces "$CACHE/profile-bin/cityref-go-kit" "$out/cpu.pprof" >"$out/stacks.txt" 2>/dev/null; format=(--pprof) ;;
esac

if [ -z "$rate" ]; then
  requests=$(awk '/requests in/{print $1}' "$out/load.txt")
  throughput="$(awk '/Requests\/sec/{printf "%d req/s", $2}' "$out/load.txt")"
  step="64 connections"
else  # vegeta's report: "Requests [total, rate, throughput] N, R, T" and "Latencies [min, mean, 50, 90, 95, 99, max] …"
  requests=$(awk '/^Requests/{split($0, a, "] +"); split(a[2], b, ", "); print b[1]}' "$out/load.txt")
  throughput="$(awk '/^Requests/{split($0, a, "] +"); split(a[2], b, ", "); printf "%d req/s", b[3]}
    /^Latencies/{split($0, a, "] +"); split(a[2], b, ", "); printf ", p99 %s", b[6]}' "$out/load.txt")"
  step="$rate req/s"
fi
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- services scripts ':(exclude)*.md' || echo +dirty)"
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs"
cpu_us=$(python3 -c "print(round(($c1 - $c0) * 1e4 / $requests, 1))")
{
  echo "$svc at $commit, $step: $throughput; CPU per request $cpu_us µs (profiler attached)"
  scripts/python.sh scripts/profile_report.py "$svc" "$out/stacks.txt" "${format[@]}" --step "$step" \
    --throughput "$throughput" --cpu-us "$cpu_us" --commit "$commit" --date "$(date -u +%Y-%m-%d)" \
    --machine "$machine" ${PUBLISH:+--publish}
} | tee "$out/report.txt"
echo "output: $out"
