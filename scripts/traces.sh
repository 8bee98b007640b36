#!/usr/bin/env bash
# The trace backend, one command: Jaeger v2 (all-in-one, traces in memory), built from the version
# pinned in tools/jaeger/go.mod (the Go module proxy serves it; no release binary is downloaded)
# and run with tools/jaeger/config.yaml.
#
#   scripts/traces.sh up      build once into ~/.cache/cityref/bin, start, wait until healthy (idempotent)
#   scripts/traces.sh stop    stop it (its traces are gone: storage is in memory)
#   scripts/traces.sh status  the health endpoint's answer
#   scripts/traces.sh url     the query API and UI (the suite's --traces URL)
#   scripts/traces.sh otlp    the OTLP/HTTP endpoint (the services' OTEL_EXPORTER_OTLP_ENDPOINT)
#   scripts/traces.sh pid     the process id, when running (the benchmark measures its CPU)
#   scripts/traces.sh agent   fetch the OpenTelemetry Java agent (Maven Central, checksum verified)
#                             into .cache/otel and print its path (the benchmark's `agent` variant)
#
# Listens on 127.0.0.1 only: OTLP/HTTP $TRACES_OTLP_PORT (4318), OTLP/gRPC $TRACES_OTLP_GRPC_PORT
# (4317), query $TRACES_QUERY_PORT (16686) and its gRPC 16685, health $TRACES_HEALTH_PORT (13133).
# A port in use is one line on stderr and exit 2.
source "$(dirname "$0")/lib.sh"

JAEGER_MODULE="$ROOT/tools/jaeger"
JAEGER_VERSION=$(awk '$1 == "github.com/jaegertracing/jaeger" { print $2 }' "$JAEGER_MODULE/go.mod")
BIN="$TOOLS/jaeger-$JAEGER_VERSION"
DIR="$CACHE/traces"
PIDFILE="$DIR/jaeger.pid"
export TRACES_OTLP_PORT=${TRACES_OTLP_PORT:-4318} TRACES_OTLP_GRPC_PORT=${TRACES_OTLP_GRPC_PORT:-4317}
export TRACES_QUERY_PORT=${TRACES_QUERY_PORT:-16686} TRACES_QUERY_GRPC_PORT=${TRACES_QUERY_GRPC_PORT:-16685}
export TRACES_HEALTH_PORT=${TRACES_HEALTH_PORT:-13133}
QUERY_URL="http://127.0.0.1:$TRACES_QUERY_PORT"
OTLP_URL="http://127.0.0.1:$TRACES_OTLP_PORT"

build() {
  [ -x "$BIN" ] && return
  need_tool go "install Go (see README.md: requirements)"
  log "building Jaeger $JAEGER_VERSION (tools/jaeger/go.mod) into $BIN"
  local t0=$SECONDS
  mkdir -p "$(dirname "$BIN")"
  (cd "$JAEGER_MODULE" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN.part" \
    github.com/jaegertracing/jaeger/cmd/jaeger) && mv "$BIN.part" "$BIN"
  log "Jaeger built in $((SECONDS - t0)) s"
}

AGENT_VERSION=2.31.0
AGENT_SHA256=d48673b2ff956b26d809bc34243649913d4eefd9191c4e175b686da633e0134b   # Maven Central's .sha256
AGENT_JAR="$CACHE/otel/opentelemetry-javaagent-$AGENT_VERSION.jar"

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
healthy() { curl -fsS -m 2 "http://127.0.0.1:$TRACES_HEALTH_PORT/status" >/dev/null 2>&1; }

start() {
  if running && healthy; then
    log "Jaeger already running: query $QUERY_URL, OTLP $OTLP_URL"
    return
  fi
  local port
  for port in "$TRACES_OTLP_PORT" "$TRACES_OTLP_GRPC_PORT" "$TRACES_QUERY_PORT" "$TRACES_QUERY_GRPC_PORT" "$TRACES_HEALTH_PORT"; do
    need_port "$port" "the trace backend" "stop that process, or choose ports with TRACES_*_PORT (scripts/traces.sh)"
  done
  build
  mkdir -p "$DIR"
  log "starting Jaeger $JAEGER_VERSION: query $QUERY_URL, OTLP $OTLP_URL"
  setsid "$BIN" --config "$JAEGER_MODULE/config.yaml" < /dev/null > "$DIR/jaeger.log" 2>&1 &
  echo $! > "$PIDFILE"
  for _ in $(seq 120); do
    healthy && { log "Jaeger healthy"; return; }
    running || { tail -20 "$DIR/jaeger.log" >&2; die "Jaeger exited; see $DIR/jaeger.log"; }
    sleep 0.25
  done
  die "Jaeger not healthy after 30 s; see $DIR/jaeger.log"
}

stop() { stop_pidfile "$PIDFILE" Jaeger 10; }

case "${1:-up}" in
  up)     start ;;
  build)  build ;;
  stop)   stop ;;
  status) curl -fsS "http://127.0.0.1:$TRACES_HEALTH_PORT/status"; echo ;;
  url)    echo "$QUERY_URL" ;;
  otlp)   echo "$OTLP_URL" ;;
  pid)    running && cat "$PIDFILE" ;;
  agent)  fetch "$MAVEN_CENTRAL/io/opentelemetry/javaagent/opentelemetry-javaagent/$AGENT_VERSION/opentelemetry-javaagent-$AGENT_VERSION.jar" \
            "$AGENT_JAR" "$AGENT_SHA256"; echo "$AGENT_JAR" ;;
  *)      die "usage: $0 up|build|stop|status|url|otlp|pid|agent" ;;
esac
