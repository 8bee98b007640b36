#!/usr/bin/env bash
# `make up`: Elasticsearch with the fixture, then every implementation (services/*/cityref.yaml), or
# those in SERVICES (`make up SERVICES=rust-actix`: only that toolchain needed), built and running
# in the background on its own port. `make down` stops everything.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
RUN="$OUT/run"; mkdir -p "$RUN"
scripts/es.sh up
ES_URL=$(scripts/es.sh url)
services=$(scripts/python.sh scripts/services.py list) || exit 1
for svc in $services; do
  port=$(scripts/python.sh scripts/services.py get "$svc" port)
  if [ -f "$RUN/$svc.pid" ] && kill -0 "$(cat "$RUN/$svc.pid")" 2>/dev/null; then
    log "$svc already running on port $port"; continue
  fi
  log "building $svc"
  (cd "services/$svc" && bash -c "$("$ROOT/scripts/python.sh" "$ROOT/scripts/services.py" get "$svc" build)") >"$RUN/$svc.build.log" 2>&1 \
    || { tail -30 "$RUN/$svc.build.log" >&2; die "building $svc failed (log: $RUN/$svc.build.log)"; }
  scripts/python.sh scripts/services.py start "$svc" "$port" "$ES_URL" "$RUN/$svc.log" "$RUN/$svc.pid"
  for _ in $(seq 150); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 || { tail -20 "$RUN/$svc.log" >&2; die "$svc did not come up (log: $RUN/$svc.log)"; }
done
echo
echo "Elasticsearch  $ES_URL   (fixture loaded)"
for svc in $services; do
  port=$(scripts/python.sh scripts/services.py get "$svc" port)
  printf '%-14s http://127.0.0.1:%s   log: out/run/%s.log\n' "$svc" "$port" "$svc"
done
first=$(echo "$services" | head -1)
if [ -n "$first" ]; then
  url="http://127.0.0.1:$(scripts/python.sh scripts/services.py get "$first" port)/city/v1/get?id=3&language=de"
  echo; echo "Sample request:  curl -i '$url'"
  curl -sS -i "$url"; echo
fi
echo "Stop everything with: make down"
