# shellcheck shell=bash
# Shared shell helpers; source from scripts/*.sh. Paths are relative to the project root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache"   # downloads, toolchains, the venv, Elasticsearch and its data
OUT="$ROOT/out"        # every output: test results, image archives, runs, profiles, logs
# Tools built from source (Jaeger, vegeta; golangci-lint in services/go-kit/Makefile) and the image
# storage live in the user's cache, beside Go's and Maven's, one binary per pinned version, so that
# a new clone reuses them: $CITYREF_TOOLS, else $XDG_CACHE_HOME/cityref, else ~/.cache/cityref.
USER_CACHE="${CITYREF_TOOLS:+$(dirname "$CITYREF_TOOLS")}"
USER_CACHE="${USER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cityref}"
# shellcheck disable=SC2034  # used by the scripts that source this file
TOOLS="${CITYREF_TOOLS:-$USER_CACHE/bin}"
mkdir -p "$CACHE" "$OUT/logs"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }   # a failure

# need_fail WHAT FIX: a missing prerequisite, as one line on stderr, `cityref: WHAT: FIX`, and exit 2
# (the Python entry points print the same: cityref_tools/prerequisites.py).
need_fail() { printf 'cityref: %s: %s\n' "$1" "$2" >&2; exit 2; }
# need_tool COMMAND FIX: COMMAND is on PATH, else need_fail.
need_tool() { command -v "$1" >/dev/null || need_fail "$1 missing" "$2"; }
# need_port PORT WHAT FIX: nothing listens on TCP port PORT (any address), else need_fail naming the
# process that does when ss can tell.
need_port() {
  local held who
  held=$(ss -Hltnp "sport = :$1" 2>/dev/null | head -1) || true
  if [ -z "$held" ]; then   # nothing, or no ss: does anything answer?
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null || return 0
  fi
  who=$(sed -n 's/.*users:(("\([^"]*\)",pid=\([0-9]*\).*/ by pid \2 (\1)/p' <<<"$held")
  need_fail "port $1 ($2) is in use$who" "$3"
}
# shellcheck disable=SC2034  # used by the scripts that source this file
IMAGE_TOOLS_FIX="apt-get install podman buildah runc uidmap fuse-overlayfs mmdebstrap (as root; see .ci/run)"

# A JDK 25+ for every JVM build and tool (JAVA_HOME first, then the system's JVM directories; Debian
# 12's own JDK 17 is too old for http4k 6 and Helidon 4): scripts/java-home.sh, which says in one
# line what is missing and exits 2 when there is none. Call it as `jh=$(java_home)` (an assignment
# of its own, so that set -e stops the script) or `java_home >/dev/null`.
java_home() {
  "$ROOT/scripts/java-home.sh" || exit $?
}

# stop_pidfile PIDFILE WHAT SECONDS — SIGTERM to the process the file names (if it runs), SIGKILL after
# SECONDS, then the file removed (Elasticsearch, the trace backend).
stop_pidfile() {
  local file=$1 what=$2 seconds=$3 pid
  if [ -f "$file" ] && pid=$(cat "$file") && kill -0 "$pid" 2>/dev/null; then
    log "stopping $what (pid $pid)"
    kill "$pid"
    for _ in $(seq $((seconds * 4))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" || true; fi
  fi
  rm -f "$file"
}

# fetch URL DEST SHA256 — download once, verify the checksum every time.
fetch() {
  local url=$1 dest=$2 sum=$3
  if [ ! -f "$dest" ] || ! echo "$sum  $dest" | sha256sum -c --status -; then
    mkdir -p "$(dirname "$dest")"
    log "fetching $url"
    curl -fsSL --retry 3 -o "$dest.part" "$url"
    echo "$sum  $dest.part" | sha256sum -c --status - || die "checksum mismatch for $url"
    mv "$dest.part" "$dest"
  fi
}

# shellcheck disable=SC2034  # used by the scripts that source this file
MAVEN_CENTRAL=https://repo1.maven.org/maven2
