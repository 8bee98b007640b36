#!/usr/bin/env bash
# `make doctor`: checks every requirement of `make up`, `make test`, `make images` and `make bench`,
# and prints a one-line fix for each one missing. With SERVICES=a,b it checks only the toolchains
# those services need. Exits 1 when something `make test` needs is missing; wrk, nginx and root,
# which only the benchmark needs (scripts/bench.sh installs the first two when run as root), are
# reported as optional.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
missing=0

ok()   { printf '  ok       %-28s %s\n' "$1" "$2"; }
bad()  { printf '  MISSING  %-28s fix: %s\n' "$1" "$2"; missing=1; }
opt()  { printf '  optional %-28s fix: %s\n' "$1" "$2"; }

# have NAME FIX [optional]: the command is on PATH
have() {
  local name=$1 fix=$2 kind=${3:-}
  if command -v "$name" >/dev/null 2>&1; then
    ok "$name" "$(command -v "$name")"
  elif [ "$kind" = optional ]; then opt "$name" "$fix"
  else bad "$name" "$fix"
  fi
}

# at_least NAME HAVE WANT FIX: a dotted version HAVE is at least WANT
at_least() {
  if [ "$(printf '%s\n%s\n' "$3" "$2" | sort -V | head -1)" = "$3" ]; then ok "$1" "$2"; else bad "$1 >= $3" "$4 (found $2)"; fi
}

echo "core (make test, make up):"
have make "apt-get install make"
have curl "apt-get install curl"
have unzip "apt-get install unzip"
have git "apt-get install git"
if command -v python3 >/dev/null; then
  at_least python3 "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" 3.11 "install Python 3.11+ (the suite's schemathesis needs it; Debian 12: apt-get install python3 python3-venv)"
  if python3 -c 'import venv, ensurepip' 2>/dev/null; then ok "python3 venv" ""; else bad "python3 venv" "apt-get install python3-venv"; fi
else
  bad python3 "install Python 3.11+ (Debian 12: apt-get install python3 python3-venv)"
fi
if command -v node >/dev/null; then
  at_least node "$(node --version | tr -d v)" 20 "install Node 20+ (the spec linter, tools/lint)"
  have npm "install npm with Node 20+"
else
  bad node "install Node 20+ (the spec linter, tools/lint)"
fi
if jh=$(scripts/java-home.sh 2>/dev/null); then
  ok "JDK 25+" "$jh"
else
  bad "JDK 25+" "set JAVA_HOME to a JDK 25+ (the OpenAPI generator and the JVM services; e.g. Temurin 25)"
fi

services=$(scripts/python.sh scripts/services.py list) || exit 1
echo "services ($(echo "$services" | paste -sd, -)):"
need_rust=0 need_go=1 need_jvm=0   # Go for every run: the trace backend (make traces) is built from source
for svc in $services; do
  case "$(scripts/python.sh scripts/services.py get "$svc" language)" in
    Rust*) need_rust=1 ;;
    Go*) need_go=1 ;;
    Java*|Kotlin*) need_jvm=1 ;;
  esac
done
if [ $need_rust = 1 ]; then
  have cargo "install Rust 1.95+ (rustup.rs: rustup toolchain install 1.95)"
  if cargo clippy --version >/dev/null 2>&1; then ok "cargo clippy" "$(cargo clippy --version)"; else bad "cargo clippy" "rustup component add clippy"; fi
fi
if [ $need_go = 1 ]; then
  if command -v go >/dev/null; then
    at_least go "$(go env GOVERSION | tr -d go)" 1.26 "install Go 1.26+ (go.dev/dl; go-kit and the trace backend)"
  else
    bad go "install Go 1.26+ (go.dev/dl; go-kit and the trace backend)"
  fi
fi
# Maven itself comes through the wrapper (services/mvnw fetches 3.9.16 from Maven Central), which
# needs only the JDK above and unzip.
[ $need_jvm = 0 ] || ok "Maven" "services/mvnw (3.9.16, fetched on first use)"

echo "images (make images, make test-images, and the last stages of make test):"
for tool in podman buildah runc mmdebstrap; do
  have "$tool" "$IMAGE_TOOLS_FIX"
done
echo "benchmark (make bench; make test's smoke run):"
have wrk "apt-get install wrk (scripts/bench.sh installs it as root)" optional
have nginx "apt-get install nginx-light (scripts/bench.sh installs it as root)" optional
if [ "$(id -u)" = 0 ]; then
  ok "root" "the benchmark creates cgroups for its limits"
else
  opt "root" "run make bench as root: it creates cgroups (v1 or v2) for the 1.5-CPU / 512 MiB limits"
fi

echo
if [ $missing = 0 ]; then echo "everything make test needs is here"; else echo "fix the MISSING lines above, then run make doctor again"; fi
exit $missing
