#!/usr/bin/env bash
# compose.yaml end to end, with podman-compose (`make test-images`, after `make images`):
#   1. `podman-compose up -d` of the whole file (project cityref-test), in its dependency order:
#      Elasticsearch and the fixture loader (must exit 0), then every service;
#   2. per service: it answers /health, and its compose health check passes (`podman healthcheck
#      run`: podman 4.3 without systemd does not schedule health checks itself, and podman-compose
#      skips `service_healthy` conditions on podman < 4.6, so the loader waits for Elasticsearch);
#   3. per service: the conformance suite from the conformance image, against the service compose
#      started (--base-url: the HTTP groups; the image tests run every group through the images);
#   4. `podman-compose down`, also on failure;
#   5. `cityref-conformance elasticsearch` (the suite's subcommand): the Elasticsearch image with the
#      fixture, on port 9201, then --stop.
# JUnit XML in out/results/compose-<service>.xml. Exit 1 if anything failed.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PODMAN="$ROOT/scripts/podman.sh"
PROJECT=cityref-test
ES_PORT=${CITYREF_ES_PORT:-9200}
export CITYREF_ES_PORT=$ES_PORT
compose() { scripts/python.sh -m podman_compose --podman-path "$PODMAN" -p "$PROJECT" -f compose.yaml "$@"; }
RESULTS="$OUT/results/compose"
mkdir -p "$RESULTS" "$OUT/logs" && chmod 1777 "$RESULTS"   # the suite's image runs as 65532

failed=0
# shellcheck disable=SC2317  # called by the EXIT trap
down() {
  compose logs >"$OUT/logs/compose.log" 2>&1 || true
  compose down -t 30 >/dev/null 2>&1 || true
}
trap down EXIT

# The services in compose.yaml, with their ports.
mapfile -t rows < <(scripts/python.sh - <<'PY'
import yaml
doc = yaml.safe_load(open("compose.yaml", encoding="utf-8"))
for name, svc in doc["services"].items():
    if "PORT" in svc.get("environment", {}):
        print(name, svc["environment"]["PORT"])
PY
)
[ ${#rows[@]} -gt 0 ] || die "no services in compose.yaml"

# In dependency order, one step at a time (--no-deps): podman 4.3 cannot start a container whose
# --requires (podman-compose's translation of depends_on) names a one-shot container that has
# exited ("generating dependency graph … not found in input list"), and podman-compose skips the
# service_healthy conditions before podman 4.6. docker compose and newer podman take the plain
# `up -d`; the steps are what its conditions say.
log "compose up ($PROJECT; Elasticsearch on 127.0.0.1:$ES_PORT): elasticsearch, fixture"
compose down -t 10 >/dev/null 2>&1 || true
up() { compose up -d --no-build --no-deps "$@" >>"$OUT/logs/compose-up.log" 2>&1 || { tail -20 "$OUT/logs/compose-up.log" >&2; die "compose up $* failed"; }; }
: >"$OUT/logs/compose-up.log"
up elasticsearch fixture
fixture_rc=$("$PODMAN" wait "${PROJECT}_fixture_1") || die "no fixture container"
if [ "$fixture_rc" = 0 ]; then log "fixture loader: exit 0"; else log "fixture loader: exit $fixture_rc"; failed=1; fi
names=(); for row in "${rows[@]}"; do names+=("${row%% *}"); done
log "compose up: ${names[*]}"
up "${names[@]}"

for row in "${rows[@]}"; do
  read -r svc port <<<"$row"
  container="${PROJECT}_${svc}_1"
  deadline=$((SECONDS + 120))
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then log "$svc: no /health on :$port after 120 s"; failed=1; continue 2; fi
    sleep 1
  done
  if "$PODMAN" healthcheck run "$container" >/dev/null; then
    log "$svc: answers on :$port, compose health check: healthy"
  else
    log "$svc: compose health check FAILED"; failed=1
  fi
  log "$svc: conformance (conformance image, --base-url)"
  "$PODMAN" run --rm --pull=never --network host -v "$RESULTS:/work/out" \
    -v "$ROOT/services/$svc/cityref.yaml:/work/known-failures.yaml:ro" \
    "localhost/cityref/conformance:${IMAGE_TAG:-latest}" --base-url "http://127.0.0.1:$port" \
    --es-url "http://127.0.0.1:$ES_PORT" --name "$svc" --known-failures known-failures.yaml \
    --out "out/$svc" --junit "out/compose-$svc.xml" || failed=1
done

# The suite's own way to a ready backend: `cityref-conformance elasticsearch` runs the Elasticsearch
# image with the fixture loaded (beside compose's, on its own ports).
log "cityref-conformance elasticsearch: Elasticsearch image + fixture on 127.0.0.1:9201"
es_cli() { scripts/python.sh -m conformance elasticsearch --runtime "$PODMAN" --name cityref-test-es "$@"; }
if url=$(es_cli --port 9201 2>"$OUT/logs/conformance-elasticsearch.log") \
  && curl -fsS "$url/city/_doc/1" | grep -q '"found":true'; then
  log "cityref-conformance elasticsearch: $url serves the fixture"
else
  tail -5 "$OUT/logs/conformance-elasticsearch.log" >&2; log "cityref-conformance elasticsearch FAILED"; failed=1
fi
es_cli --stop >/dev/null 2>&1 || true
exit $failed
