#!/usr/bin/env bash
# `make test`: spec lint, the Python and shell linters, the suite's self-tests, every service built
# and unit-tested (compiled once: `make -C services/<svc> ci`), the full conformance suite against
# every implementation in services/*/cityref.yaml (those builds, against the Elasticsearch fixture,
# with tracing on into the trace backend of `make traces`, whose spans the tracing group reads
# back), the differential group (the same generated hostile requests to all of them at once), the
# installable suite end to end (scripts/package-test.sh), the benchmark harness's unit tests and
# smoke runs (bench/: the main run and the resilience run), then every image built from the
# artifacts those stages built and tested (`scripts/images.sh build --prebuilt`; one service's
# builder stage also from source, compared with them) and tested, compose.yaml included
# (`make test-images`), and last the shell blocks of README.md, conformance/README.md and
# Dockerfiles/README.md run verbatim (scripts/doc_commands.py) that no other stage runs.
#
# The tools built from source (the trace backend, golangci-lint, vegeta) and the local base images
# start first, in the background at normal priority, and only the stage that needs one waits for
# it; Elasticsearch starts beside them. Nothing runs in the background once the conformance stages
# begin (their timing checks measure the services, not this machine's other work).
#
# Runs every stage, prints a table (start, wall time, CPU time of the stage's processes, result,
# what it checks), writes it to out/results/stages.json, and exits non-zero if any stage failed.
# JUnit XML lands in out/results/.
# SERVICES=a,b (make test SERVICES=rust-actix) limits every per-service stage to those, so that only
# their toolchains are needed.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
mkdir -p "$OUT/results" "$OUT/logs/stages"
ROWS="$OUT/logs/stages/rows.tsv"
: >"$ROWS"
T0=$SECONDS
TICKS=$(getconf CLK_TCK)
failed=0

# measure FILE CMD...: runs CMD (in this subshell) and writes "rc wall cpu-ticks" to FILE: the CPU
# time of CMD and every process it waited for (daemons it started, such as Elasticsearch, not).
measure() {
  local file=$1 t0=$SECONDS rc=0; shift
  "$@" || rc=$?
  local stat; read -ra stat </proc/$BASHPID/stat
  echo "$rc $((SECONDS - t0)) $((stat[13] + stat[14] + stat[15] + stat[16]))" >"$file"
  return $rc
}

# row NAME CHECKS START FILE MODE: one line of the table from measure's FILE.
row() {
  local rc wall ticks result
  read -r rc wall ticks <"$4"
  result=ok; [ "$rc" = 0 ] || { result="FAILED ($rc)"; failed=1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$3" "$wall" "$((ticks / TICKS))" "$result" "$5" "$2" >>"$ROWS"
}

# stage NAME CHECKS CMD...: CMD in the foreground.
n=0
stage() {
  local name=$1 checks=$2 start=$((SECONDS - T0)) file="$OUT/logs/stages/$((n += 1)).rc"; shift 2
  log "=== $name"
  (measure "$file" "$@") || true
  row "$name" "$checks" "$start" "$file" foreground
}

# background NAME CHECKS CMD...: CMD started now, its output in out/logs/stages/<NAME>.log;
# await NAME waits for it (once) and adds its row. Only this shell can wait for them: never call
# await from a stage's command.
declare -A BG_PID=() BG_FILE=() BG_START=() BG_CHECKS=()
background() {
  local name=$1 checks=$2 file="$OUT/logs/stages/$((n += 1)).rc"; shift 2
  log "=== $name (started in the background; log: out/logs/stages/${name//[^a-zA-Z0-9.-]/_}.log)"
  (measure "$file" "$@") >"$OUT/logs/stages/${name//[^a-zA-Z0-9.-]/_}.log" 2>&1 &
  BG_PID[$name]=$!; BG_FILE[$name]=$file; BG_START[$name]=$((SECONDS - T0)); BG_CHECKS[$name]=$checks
}
await() {
  local name=$1
  [ -n "${BG_PID[$name]:-}" ] || return 0
  wait "${BG_PID[$name]}" || tail -30 "$OUT/logs/stages/${name//[^a-zA-Z0-9.-]/_}.log" >&2
  row "$name" "${BG_CHECKS[$name]}" "${BG_START[$name]}" "${BG_FILE[$name]}" background
  [ "$(cut -d' ' -f1 "${BG_FILE[$name]}")" = 0 ] || log "$name failed"
  unset "BG_PID[$name]"
}
# await_ok NAME: await, then true only if it succeeded (for a stage that cannot run without it).

services=$(scripts/python.sh scripts/services.py list) || exit 1
has() { grep -qx "$1" <<<"$services"; }

stage "requirements (make doctor)" "every toolchain and tool the stages need, each with its fix" scripts/doctor.sh
# The long builds first, beside everything up to the conformance stages.
background "tool: trace backend (Jaeger, from source)" "Jaeger builds from tools/jaeger/go.mod" \
  scripts/traces.sh build
if has go-kit; then
  background "tool: golangci-lint (from source)" "golangci-lint builds from tools/golangci-lint/go.mod" \
    make -C services/go-kit --no-print-directory lint-tool
fi
background "tool: vegeta (from source)" "vegeta builds from the Go module proxy" scripts/bench.sh vegeta
# (--prebuilt needs no Rust or Go builder image: the static binaries are built above)
background "images: local base images (mmdebstrap)" "the JDK, glibc and Python images the Dockerfiles get here" \
  scripts/images.sh bases base jdk python
background "elasticsearch + fixture" "Elasticsearch 8.19.21 starts healthy and holds the fixture" \
  scripts/es.sh up

stage "spec lint" "spec/openapi.yaml: Spectral (warn fails), openapi-spec-validator" scripts/lint-spec.sh
stage "lint: Python (ruff), shell (shellcheck)" "ruff over the Python, shellcheck over every script" scripts/lint.sh
stage "shared Python tools tests" "cityref_tools/tests" scripts/python.sh -m pytest -q cityref_tools/tests
stage "conformance self-tests" "conformance/tests_self: the suite fails what it must fail" \
  scripts/python.sh -m pytest -q conformance/tests_self
stage "README generated parts: services, results" "README.md's generated tables match their sources" \
  scripts/python.sh scripts/readme_table.py --check
stage "Kubernetes manifests: drift, schemas" "deploy/kubernetes/ matches the descriptors and its schemas" \
  scripts/python.sh scripts/kubernetes.py --check
stage "compose.yaml: drift" "compose.yaml matches the descriptors and Dockerfiles" scripts/python.sh scripts/compose.py --check
stage "bench unit tests" "bench/tests" scripts/python.sh -m pytest -q bench/tests
# Each service built and checked in one pass (make ci: its artifact, formatter, linters, unit tests,
# generated-code drift); go-kit last, since its linter is built in the background.
# Cargo's build directory in the user's cache, like Go's build cache and ~/.m2 (a new clone on a
# warm machine then compiles only the service's own crate, not its dependencies again).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$USER_CACHE/cargo-target}"
for svc in $(grep -vx go-kit <<<"$services"; grep -x go-kit <<<"$services" || true); do
  [ "$svc" != go-kit ] || await "tool: golangci-lint (from source)"
  stage "build + unit tests: $svc" "make -C services/$svc ci: the artifact, formatting, linters, unit tests, generated-code drift" \
    make -C "services/$svc" ci
done
await "elasticsearch + fixture"
await "tool: trace backend (Jaeger, from source)"
stage "trace backend (make traces)" "Jaeger starts healthy (OTLP and the query API)" scripts/traces.sh up
await "tool: vegeta (from source)"
await "images: local base images (mmdebstrap)"
# The bare services run the suite with tracing on (every instance exports to the trace backend, and
# the tracing group reads the spans back); the images run it with tracing off, its default. The
# builds are the ones above (--no-build).
for svc in $services; do
  stage "conformance: $svc (tracing on)" "every check group of the suite against the bare build" \
    scripts/python.sh -m conformance --service "$svc" --no-build \
    --es-url "$(scripts/es.sh url)" --traces "$(scripts/traces.sh url)" --otlp-url "$(scripts/traces.sh otlp)" \
    --junit "$OUT/results/conformance-$svc.xml"
done
if [ -z "${SERVICES:-}" ]; then  # every service: conformance/README.md's command, verbatim
  stage "differential: every service" "5,000 generated requests, the desync tier and the fixed cases to all at once" \
    scripts/python.sh scripts/doc_commands.py run conformance/README.md --only differential
elif [ "$(echo "$services" | wc -w)" -ge 2 ]; then
  diff_args=(); for svc in $services; do diff_args+=(--service "$svc"); done
  stage "differential: $(echo "$services" | paste -sd, -)" "the generated requests to all of them at once" \
    scripts/python.sh -m conformance differential \
    "${diff_args[@]}" --es-url "$(scripts/es.sh url)" --out "$OUT/results/differential"
else
  log "differential: skipped (it compares two or more services; SERVICES=${SERVICES:-})"
fi
# The suite as a third party uses it: installed into a fresh venv outside the tree, run against
# go-kit's binary with a known-failures file kept outside the repository (needs go-kit's build).
if has go-kit; then
  stage "installable suite: fresh venv, external repo" "the wheel in a fresh venv: --command with --name and known failures, --base-url, load-fixture" \
    scripts/package-test.sh
else
  log "installable suite: skipped (it runs against go-kit; SERVICES=${SERVICES:-})"
fi
stage "bench smoke run" "the harness end to end: A/A twin, trace-all variant, observability table, check" scripts/bench.sh smoke
stage "bench resilience smoke run" "every resilience scenario briefly, then check" scripts/bench.sh resilience-smoke
stage "images: build (from the bare builds' artifacts)" "every Dockerfile builds on the artifacts tested above; OCI archives" \
  scripts/images.sh build --prebuilt
if has java-helidon; then  # the from-source path: the Dockerfile with the richest /out/ (a jar and libs/)
  stage "images: java-helidon's builder stage from source" "the from-source builder stage gives the files --prebuilt gives" \
    scripts/images.sh source-check java-helidon
fi
stage "images: conformance, startup, memory" "every image under the limits: startup, idle memory, full suite, differential, JVM startup budget, compose" \
  scripts/images.sh test
# Last, the documents' commands verbatim (scripts/doc_commands.py): they use what the stages above
# built (the services, out/images/) and name services of this repository, so only without SERVICES.
if [ -z "${SERVICES:-}" ]; then
  stage "docs: README commands, verbatim" "the shell blocks of the three READMEs no other stage runs" \
    scripts/python.sh scripts/doc_commands.py run README.md conformance/README.md Dockerfiles/README.md
else
  log "docs: README commands skipped (they use every service; SERVICES=$SERVICES)"
fi
for name in "${!BG_PID[@]}"; do await "$name"; done

total=$((SECONDS - T0))
python3 - "$ROWS" "$OUT/results/stages.json" "$total" <<'PY'
import json, os, sys, subprocess, time
rows_file, out, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
for line in open(rows_file, encoding="utf-8"):
    name, start, wall, cpu, result, mode, checks = line.rstrip("\n").split("\t")
    rows.append({"stage": name, "start_s": int(start), "wall_s": int(wall), "cpu_s": int(cpu),
                 "result": result, "background": mode == "background", "checks": checks})
rows.sort(key=lambda r: r["start_s"])
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
doc = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit, "machine": f"{os.cpu_count()} CPUs, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') >> 30} GiB, "
       f"{os.uname().sysname} {os.uname().release}",
       "total_s": total, "cpu_s": sum(r["cpu_s"] for r in rows), "stages": rows}
json.dump(doc, open(out, "w", encoding="utf-8"), indent=1)
print()
print(f"{'stage':<52} {'start':>6} {'wall s':>7} {'CPU s':>6}  result  checks")
for r in rows:
    mark = "&" if r["background"] else " "
    print(f"{r['stage'][:51]:<51}{mark} {r['start_s'] // 60:3d}:{r['start_s'] % 60:02d} {r['wall_s']:7d} {r['cpu_s']:6d}  "
          f"{r['result']:<6}  {r['checks']}")
print(f"total {total // 60} min {total % 60} s wall, {doc['cpu_s']} CPU s (& = in the background); {out}")
PY
exit $failed
