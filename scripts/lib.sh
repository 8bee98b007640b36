# shellcheck shell=bash
# Shared shell helpers; source from scripts/*.sh. Paths are relative to the project root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache"   # downloads, toolchains, the venv, Elasticsearch and its data
OUT="$ROOT/out"        # every output: test results, image archives, runs, profiles, logs
mkdir -p "$CACHE" "$OUT/logs"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# A JDK 25+ for every JVM build and tool (JAVA_HOME first, then the system's JVM directories; Debian
# 12's own JDK 17 is too old for http4k 6 and Helidon 4): scripts/java-home.sh.
java_home() {
  "$ROOT/scripts/java-home.sh" || die "no JDK 25 or newer (see above)"
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
