#!/usr/bin/env bash
# A real Elasticsearch 8.19 for development, tests and benchmarks, one command.
#
#   scripts/es.sh up       fetch (checksum verified), start, wait for green, create indices, load the fixture
#   scripts/es.sh start    start only (idempotent: reuses a running node)
#   scripts/es.sh stop     stop the node
#   scripts/es.sh reset    stop and delete all data (the next `up` starts fresh)
#   scripts/es.sh status   print cluster health
#
# Everything lives under .cache/es (ignored). Elasticsearch refuses to run as root: run as root,
# the script creates the system user `cityref-es` and runs the node as that user; run as anyone
# else, the node runs as you (no root needed). Security off, 512 MB heap, HTTP on $ES_PORT
# (default 9250). Before starting, a port in use (HTTP or transport) or no JDK 25+ is one line on
# stderr and exit 2.
source "$(dirname "$0")/lib.sh"

ES_VERSION=8.19.21
ES_SHA256=215d5f3dbf0609a149f6218a9e47b6ae2df34ebbff3c5754e35f15a5e5393c8a
ES_PORT=${ES_PORT:-9250}
ES_TRANSPORT_PORT=${ES_TRANSPORT_PORT:-9350}
ES_HEAP=${ES_HEAP:-512m}
ES_USER=cityref-es
ES_DIR="$CACHE/es"
ES_HOME="$ES_DIR/elasticsearch-$ES_VERSION"
ES_CONF="$ES_DIR/config"
PIDFILE="$ES_DIR/logs/es.pid"
ES_URL="http://127.0.0.1:$ES_PORT"

install_es() {
  fetch "$MAVEN_CENTRAL/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$ES_VERSION/elasticsearch-$ES_VERSION.zip" \
    "$ES_DIR/elasticsearch-$ES_VERSION.zip" "$ES_SHA256"
  if [ ! -x "$ES_HOME/bin/elasticsearch" ]; then
    log "unpacking Elasticsearch $ES_VERSION"
    rm -rf "$ES_HOME" && unzip -q "$ES_DIR/elasticsearch-$ES_VERSION.zip" -d "$ES_DIR"
  fi
  mkdir -p "$ES_DIR/data" "$ES_DIR/logs" "$ES_DIR/tmp"
  rm -rf "$ES_CONF" && cp -r "$ES_HOME/config" "$ES_CONF"
  cat > "$ES_CONF/elasticsearch.yml" <<EOF
cluster.name: cityref
node.name: cityref-1
network.host: 127.0.0.1
http.port: $ES_PORT
transport.port: $ES_TRANSPORT_PORT
discovery.type: single-node
xpack.security.enabled: false
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
path.data: $ES_DIR/data
path.logs: $ES_DIR/logs
EOF
  if [ "$(id -u)" = 0 ]; then
    id "$ES_USER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$ES_USER"
    chown -R "$ES_USER" "$ES_HOME" "$ES_CONF" "$ES_DIR/data" "$ES_DIR/logs" "$ES_DIR/tmp"
  fi
}

# The node's user: cityref-es under root (which Elasticsearch refuses), else whoever runs this.
as_es() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$ES_USER" -- "$@"; else "$@"; fi
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

wait_green() {
  local deadline=$((SECONDS + ${1:-120}))
  until curl -fsS "$ES_URL/_cluster/health?wait_for_status=green&timeout=5s" >/dev/null 2>&1; do
    running || die "Elasticsearch exited; see $ES_DIR/logs/cityref.log"
    [ $SECONDS -lt $deadline ] || die "Elasticsearch not green after ${1:-120}s"
    sleep 1
  done
}

start() {
  if running && curl -fsS -m 10 "$ES_URL/_cluster/health" >/dev/null 2>&1; then
    log "Elasticsearch already running at $ES_URL"
    return
  fi
  local port jh
  for port in "$ES_PORT" "$ES_TRANSPORT_PORT"; do
    need_port "$port" Elasticsearch "stop that process, or choose free ports with ES_PORT and ES_TRANSPORT_PORT"
  done
  jh=$(java_home)
  install_es
  log "starting Elasticsearch $ES_VERSION on $ES_URL (heap $ES_HEAP)"
  local t0=$SECONDS
  as_es env ES_JAVA_HOME="$jh" ES_PATH_CONF="$ES_CONF" \
    ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP" ES_TMPDIR="$ES_DIR/tmp" \
    "$ES_HOME/bin/elasticsearch" -d -p "$PIDFILE" < /dev/null > "$ES_DIR/logs/startup.out" 2>&1 || { tail -20 "$ES_DIR/logs/startup.out" >&2; die "Elasticsearch failed to start"; }
  wait_green 120
  log "Elasticsearch green after $((SECONDS - t0)) s"
}

stop() { stop_pidfile "$PIDFILE" Elasticsearch 30; }

case "${1:-up}" in
  up)     start; "$(dirname "$0")/python.sh" "$ROOT/data/load.py" --es-url "$ES_URL" fixture ;;
  start)  start ;;
  stop)   stop ;;
  reset)  stop; rm -rf "$ES_DIR/data" "$ES_DIR/tmp"; log "Elasticsearch data deleted" ;;
  status) curl -fsS "$ES_URL/_cluster/health?pretty" ;;
  url)    echo "$ES_URL" ;;
  dist)   echo "$ES_VERSION $ES_SHA256" ;;   # Dockerfiles/elasticsearch.Dockerfile must build the same (scripts/images.sh checks)
  *)      die "usage: $0 up|start|stop|reset|status|url|dist" ;;
esac
