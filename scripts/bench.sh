#!/usr/bin/env bash
# `make bench` / `make bench-full`: set up everything a benchmark needs, then run the harness (bench/).
#   scripts/bench.sh [HARNESS OPTIONS]   setup, then `python -m bench HARNESS OPTIONS` (see --help)
#   scripts/bench.sh setup [OPTIONS]     setup only
#   scripts/bench.sh smoke               the harness's own smoke run for `make test`: rust-actix bare (with
#                                        SERVICES set and without it: the first of those),
#                                        its A/A twin and its trace-all variant (into `make traces`),
#                                        a 3-second stable warm-up, two 2-second steps, fixture city,
#                                        then `python -m bench check`
#   scripts/bench.sh publish [OPTIONS]    `make bench-publish`: setup, the publish profile, then `python -m bench
#                                        publish` into docs/results/ and README.md's results (scripts/readme_table.py)
#   scripts/bench.sh observability [OPTIONS] `make bench-observability`: setup, the trace backend, every service bare
#                                        beside its observability variants (bench/observability.py), then their
#                                        tables into docs/results/observability.md
#   scripts/bench.sh resilience [OPTIONS] `make bench-resilience`: setup (no bench dataset: the scenarios use a
#                                        fixture city), then `python -m bench resilience OPTIONS`
#   scripts/bench.sh vegeta              build vegeta alone (make test starts it first, beside the other stages)
#   scripts/bench.sh resilience-smoke    its smoke run for `make test`: rust-actix (or the first of SERVICES)
#                                        bare, every scenario for a second or two, then `python -m bench check`
# Setup (idempotent): wrk and nginx (apt-get), vegeta (Go proxy, into .cache/bin), Elasticsearch with
# the fixture (scripts/es.sh up), the bench dataset (make data-bench) unless already loaded, every
# service's `make build`, and the images that do not exist yet (scripts/images.sh build;
# BENCH_REBUILD_IMAGES=1 rebuilds them all). --no-images / --no-bare / --services are honoured.
# Before the setup: wrk and nginx present or installable (root and apt-get), and root (the harness
# creates cgroups for its limits); else one line on stderr, what is missing and its fix, and exit 2.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
VEGETA_VERSION=v12.12.0
VEGETA="$CACHE/bin/vegeta"
COMMAND=${1:-}

# wrk, nginx and taskset, installed with apt-get (root only); then root, for the harness's cgroups.
prerequisites() {
  local missing=() fix apt_log="$OUT/logs/bench-apt-get.log"
  command -v wrk >/dev/null || missing+=(wrk)
  command -v nginx >/dev/null || missing+=(nginx-light)
  command -v taskset >/dev/null || missing+=(util-linux)
  if [ ${#missing[@]} -gt 0 ]; then
    fix="apt-get install ${missing[*]} (as root)"
    { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; } || need_fail "${missing[*]} missing" "$fix"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
    } >"$apt_log" 2>&1 || need_fail "${missing[*]} missing, and apt-get could not install them (log: $apt_log)" "$fix"
    log "installed ${missing[*]} (apt-get)"
  fi
  local make="make bench"
  case $COMMAND in
    resilience*) make="make bench-resilience" ;; publish) make="make bench-publish" ;; observability) make="make bench-observability" ;;
  esac
  [ "$(id -u)" = 0 ] || need_fail "$make needs root for its cgroups (1.5-CPU / 512 MiB limits)" "run it as root, e.g. sudo $make"
}

# vegeta from the Go module proxy: `go install …@version` is refused by the Go proxy used here (403 on @v/list), a
# scratch module with `go get` + `go build` works.
vegeta() {
  [ -x "$VEGETA" ] && return
  need_tool go "install Go (https://go.dev/dl) to build vegeta, or pass --no-open-loop"
  log "building vegeta $VEGETA_VERSION into $VEGETA"
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && go mod init tmp/vegeta >/dev/null 2>&1 && go get "github.com/tsenart/vegeta/v12@$VEGETA_VERSION" \
    && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.Version=$VEGETA_VERSION" -o "$VEGETA" github.com/tsenart/vegeta/v12) >"$CACHE/vegeta-build.log" 2>&1 \
    || { rm -rf "$tmp"; tail -20 "$CACHE/vegeta-build.log" >&2; die "building vegeta failed"; }
  rm -rf "$tmp"
}

has() { local x=$1; shift; for a in "$@"; do [ "$a" = "$x" ] && return 0; done; return 1; }

selected_services() {
  local prev=""
  for a in "$@"; do
    case "$a" in --services=*) echo "${a#--services=}" | tr , ' '; return ;; esac
    [ "$prev" = "--services" ] && { echo "$a" | tr , ' '; return; }
    prev=$a
  done
  scripts/python.sh scripts/services.py list
}

setup() {
  prerequisites
  { has --no-open-loop "$@" && [ "$COMMAND" != publish ]; } || vegeta  # publish: its fixed-rate step
  scripts/es.sh up
  local es; es=$(scripts/es.sh url)
  if [ -z "${NO_DATASET:-}" ] && ! curl -fsS "$es/city/_doc/1000000?_source_includes=id" 2>/dev/null | grep -q '"found":true'; then
    log "loading the bench dataset (make data-bench)"
    make --no-print-directory data-bench
  fi
  local svcs; svcs=$(selected_services "$@")
  if ! has --no-bare "$@"; then
    for svc in $svcs; do
      log "building $svc (make -C services/$svc build)"
      make -C "services/$svc" --no-print-directory build >"$OUT/logs/bench-build-$svc.log" 2>&1 \
        || { tail -30 "$OUT/logs/bench-build-$svc.log" >&2; die "building $svc failed"; }
    done
  fi
  if ! has --no-images "$@"; then
    local todo=()
    for svc in $svcs; do
      if [ -n "${BENCH_REBUILD_IMAGES:-}" ] || ! scripts/podman.sh image exists "localhost/cityref/$svc:latest"; then todo+=("$svc"); fi
    done
    [ ${#todo[@]} = 0 ] || scripts/images.sh build "${todo[@]}"
  fi
}

# rust-actix, or with SERVICES set and without it, the first of those, built
smoke_service() {
  local svcs svc
  svcs=$(scripts/python.sh scripts/services.py list) || exit 1
  svc=$(echo "$svcs" | grep -x rust-actix || echo "$svcs" | head -1)
  make -C "services/$svc" --no-print-directory build >"$OUT/logs/bench-build-$svc.log" 2>&1 \
    || { tail -30 "$OUT/logs/bench-build-$svc.log" >&2; die "building $svc failed"; }
  echo "$svc"
}

case "$COMMAND" in
  setup) shift; setup "$@" ;;
  smoke)
    prerequisites
    scripts/es.sh up
    vegeta  # the rounds' fixed-rate step
    svc=$(smoke_service)
    out="$OUT/bench/smoke"
    # the block method in small: 2 starts of the service, of its A/A twin and of its every-request tracing
    # variant (into the trace backend), 3 interleaved rounds each
    scripts/traces.sh up
    scripts/python.sh -m bench --profile smoke --services "$svc" --aa "$svc" --variants trace-all --no-images \
      --no-floor --no-ceiling --city-id 3 --out "$out"
    scripts/python.sh -m bench observability "$out/latest/run.json"
    scripts/python.sh -m bench check "$out/latest/run.json" ;;
  publish)  # make bench-publish: the published run, into docs/results/ and README.md's results
    shift; setup "$@"
    # a target that failed is published as failed; a missing prerequisite (exit 2) stops here
    rc=0; scripts/python.sh -m bench --profile publish "$@" || rc=$?
    [ "$rc" -le 1 ] || exit "$rc"
    # the latest resilience run (make bench-resilience), if there is one, beside it, dated by its own commit
    res=(); [ -f "$OUT/bench/latest-resilience/run.json" ] && res=(--resilience "$OUT/bench/latest-resilience")
    scripts/python.sh -m bench publish "$OUT/bench/latest" "${res[@]}"
    scripts/python.sh scripts/readme_table.py
    log "published: docs/results/latest; README.md's results regenerated (commit both)" ;;
  observability)  # make bench-observability: every service bare beside its variants, into docs/results/observability.md
    shift; setup --no-images "$@"
    scripts/traces.sh up
    rc=0; scripts/python.sh -m bench --profile observability --variants all --no-images --no-floor --no-ceiling "$@" || rc=$?
    [ "$rc" -le 1 ] || exit "$rc"
    scripts/python.sh -m bench observability "$OUT/bench/latest" --publish docs/results/observability.md
    log "published: docs/results/observability.md (commit it with docs/results/observability/)" ;;
  resilience)
    shift; NO_DATASET=1 setup "$@"
    scripts/python.sh -m bench resilience "$@" ;;
  vegeta) vegeta ;;
  resilience-smoke)
    prerequisites
    vegeta
    scripts/es.sh up
    svc=$(smoke_service)
    out="$OUT/bench/smoke"
    scripts/python.sh -m bench resilience --profile smoke --services "$svc" --no-images --out "$out"
    scripts/python.sh -m bench check "$out/latest-resilience/run.json" ;;
  *) setup "$@"; scripts/python.sh -m bench "$@" ;;
esac
