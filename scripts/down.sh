#!/usr/bin/env bash
# `make down`: stops the services started by `make up`, then the trace backend and Elasticsearch.
source "$(dirname "$0")/lib.sh"
RUN="$OUT/run"
for pidfile in "$RUN"/*.pid; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile"); svc=$(basename "$pidfile" .pid)
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping $svc (pid $pid)"; kill -TERM "$pid"
    for _ in $(seq 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$pidfile"
done
"$(dirname "$0")/traces.sh" stop
"$(dirname "$0")/es.sh" stop
