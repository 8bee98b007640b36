#!/usr/bin/env bash
# The suite's in-flight check (300 lookups at once against an Elasticsearch that never answers,
# every 504 due within ELASTICSEARCH_TIMEOUT_MS + 1.5 s) against one service's bare build, RUNS
# times in a row on a busy machine: one CPU-bound loop per CPU beside it, tracing on into the
# trace backend as in make test's conformance stages.
#
#   scripts/loaded-check.sh SERVICE [RUNS]     (make loaded-check SERVICE=java-helidon RUNS=10)
#
# Starts Elasticsearch and the trace backend when they are not running; uses the build make test
# (or `make -C services/SERVICE build`) left. Prints one line per run: the result, how many of the
# 300 were late or wrong, and the kernel's TcpExtListenOverflows before and after (a dropped
# handshake delays a request by the SYN-ACK's 1 s retransmit). Logs: out/loaded-check/SERVICE-N.log.
# Exits non-zero when any run failed.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
svc=${1:?usage: scripts/loaded-check.sh SERVICE [RUNS]} runs=${2:-10}
scripts/es.sh up >/dev/null
scripts/traces.sh up >/dev/null
dir="$OUT/loaded-check"
mkdir -p "$dir"
overflows() { nstat -az TcpExtListenOverflows | awk '/ListenOverflows/ {print $2}'; }
loops=()
for _ in $(seq "$(nproc)"); do (while :; do :; done) & loops+=($!); done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
failed=0
for i in $(seq "$runs"); do
  before=$(overflows)
  log="$dir/$svc-$i.log"
  if scripts/python.sh -m conformance --service "$svc" --no-build --only backend --out "$dir/$svc" \
      --es-url "$(scripts/es.sh url)" --traces "$(scripts/traces.sh url)" --otlp-url "$(scripts/traces.sh otlp)" \
      --pytest-arg=-k --pytest-arg=test_es_in_flight >"$log" 2>&1; then
    result=pass
  else
    result="FAILED: $(grep -o -m1 '[0-9]* of 300 lookups did not answer 504 within [0-9.]*s' "$log" || echo "see $log")"
    failed=1
  fi
  echo "$svc run $i of $runs: $result; ListenOverflows +$(($(overflows) - before))"
done
exit $failed
