#!/usr/bin/env bash
# `make up`: Elasticsearch with the fixture, then every implementation (services/*/cityref.yaml), or
# those in SERVICES (`make up SERVICES=rust-actix`: only that toolchain needed), built and running
# in the background on its own port. `make down` stops everything.
# Missing prerequisites are one line on stderr and exit 2, checked before anything slow: a JDK 25+
# for the JVM services, then every port free (a service's, unless an earlier `make up` started it;
# Elasticsearch's, checked by scripts/es.sh before it starts a node).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
RUN="$OUT/run"; mkdir -p "$RUN"
services=$(scripts/python.sh scripts/services.py list) || exit 1
port_of() { scripts/python.sh scripts/services.py get "$1" port; }
started() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
for svc in $services; do
  case "$(scripts/python.sh scripts/services.py get "$svc" language)" in
    Java* | Kotlin*) java_home >/dev/null; break ;;
  esac
done
for svc in $services; do
  started "$svc" || need_port "$(port_of "$svc")" "$svc" "stop that process, or make down if an earlier make up started it"
done
scripts/es.sh up
ES_URL=$(scripts/es.sh url)
for svc in $services; do
  port=$(port_of "$svc")
  if started "$svc"; then
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
  port=$(port_of "$svc")
  printf '%-14s http://127.0.0.1:%s   log: out/run/%s.log\n' "$svc" "$port" "$svc"
done
first=$(echo "$services" | head -1)
if [ -n "$first" ]; then
  url="http://127.0.0.1:$(port_of "$first")/city/v1/get?id=3&language=de"
  echo; echo "Sample request:  curl -i '$url'"
  curl -sS -i "$url"; echo
fi
echo "Stop everything with: make down"
