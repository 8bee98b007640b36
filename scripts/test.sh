#!/usr/bin/env bash
# `make test`: spec lint, the Python and shell linters, the suite's self-tests, every service's unit tests, the full conformance
# suite against every implementation in services/*/cityref.yaml (built and started by the suite
# against the Elasticsearch fixture, with tracing on into the trace backend of `make traces`, whose
# spans the tracing group reads back), the differential group (the same generated hostile requests
# to all of them at once), the installable suite end to end (scripts/package-test.sh), the benchmark
# harness's unit tests and smoke runs (bench/: the main run and the resilience run), then every
# image built from source (`make images`)
# and tested, compose.yaml included (`make test-images`), and last the shell blocks of README.md,
# conformance/README.md and Dockerfiles/README.md run verbatim (scripts/doc_commands.py).
# Runs every stage, prints a timing table, and exits non-zero if any stage failed. JUnit XML lands
# in out/results/.
# SERVICES=a,b (make test SERVICES=rust-actix) limits every per-service stage to those, so that only
# their toolchains are needed.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
mkdir -p "$OUT/results"
declare -a NAMES=() TIMES=() STATUS=()
failed=0
stage() {
  local name=$1; shift
  log "=== $name"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  NAMES+=("$name"); TIMES+=("$((SECONDS - t0))"); STATUS+=("$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")")
  [ $rc = 0 ] || failed=1
}

stage "requirements (make doctor)" scripts/doctor.sh
# The trace backend's binary is a long Go build (minutes from a cold cache): it runs in the
# background from here at the lowest priority, in the time the stages below spend waiting on
# downloads and processes, and the trace backend's stage waits for it.
nice -n 19 scripts/traces.sh build > "$OUT/logs/traces-build.log" 2>&1 &
traces_build=$!
# shellcheck disable=SC2317  # called through stage
traces_up() {
  wait "$traces_build" || { tail -30 "$OUT/logs/traces-build.log" >&2; return 1; }
  scripts/traces.sh up
}
stage "spec lint" scripts/lint-spec.sh
stage "lint: Python (ruff), shell (shellcheck)" scripts/lint.sh
stage "shared Python tools tests" scripts/python.sh -m pytest -q cityref_tools/tests
stage "conformance self-tests" scripts/python.sh -m pytest -q conformance/tests_self
stage "README generated parts: services, results" scripts/python.sh scripts/readme_table.py --check
stage "Kubernetes manifests: drift, schemas" scripts/python.sh scripts/kubernetes.py --check
stage "compose.yaml: drift" scripts/python.sh scripts/compose.py --check
stage "bench unit tests" scripts/python.sh -m pytest -q bench/tests
services=$(scripts/python.sh scripts/services.py list) || exit 1
for svc in $services; do
  stage "unit tests: $svc" make -C "services/$svc" test
done
stage "elasticsearch + fixture" scripts/es.sh up
# The bare services run the suite with tracing on (every instance exports to the trace backend, and
# the tracing group reads the spans back); the images run it with tracing off, its default.
stage "trace backend (make traces)" traces_up
for svc in $services; do
  stage "conformance: $svc (tracing on)" scripts/python.sh -m conformance --service "$svc" \
    --es-url "$(scripts/es.sh url)" --traces "$(scripts/traces.sh url)" --otlp-url "$(scripts/traces.sh otlp)" \
    --junit "$OUT/results/conformance-$svc.xml"
done
if [ -z "${SERVICES:-}" ]; then  # every service: conformance/README.md's command, verbatim
  stage "differential: every service" scripts/python.sh scripts/doc_commands.py run conformance/README.md \
    --only differential
elif [ "$(echo "$services" | wc -w)" -ge 2 ]; then
  diff_args=(); for svc in $services; do diff_args+=(--service "$svc"); done
  stage "differential: $(echo "$services" | paste -sd, -)" scripts/python.sh -m conformance differential \
    "${diff_args[@]}" --es-url "$(scripts/es.sh url)" --out "$OUT/results/differential"
else
  log "differential: skipped (it compares two or more services; SERVICES=${SERVICES:-})"
fi
# The suite as a third party uses it: installed into a fresh venv outside the tree, run against
# go-kit's binary with a known-failures file kept outside the repository (needs go-kit's build).
if grep -qx go-kit <<<"$services"; then
  stage "installable suite: fresh venv, external repo" scripts/package-test.sh
else
  log "installable suite: skipped (it runs against go-kit; SERVICES=${SERVICES:-})"
fi
stage "bench smoke run" scripts/bench.sh smoke
stage "bench resilience smoke run" scripts/bench.sh resilience-smoke
stage "images: build" scripts/images.sh build
stage "images: conformance, startup, memory" scripts/images.sh test
# Last, the documents' commands verbatim (scripts/doc_commands.py): they use what the stages above
# built (the services, out/images/) and name services of this repository, so only without SERVICES.
if [ -z "${SERVICES:-}" ]; then
  stage "docs: README commands, verbatim" scripts/python.sh scripts/doc_commands.py run \
    README.md conformance/README.md Dockerfiles/README.md
else
  log "docs: README commands skipped (they use every service; SERVICES=$SERVICES)"
fi

echo
printf '%-40s %8s  %s\n' "stage" "seconds" "result"
for i in "${!NAMES[@]}"; do printf '%-40s %8s  %s\n' "${NAMES[$i]}" "${TIMES[$i]}" "${STATUS[$i]}"; done
exit $failed
