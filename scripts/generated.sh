#!/usr/bin/env bash
# Generated sources of a service (policy: committed, never edited by hand, drift-checked).
#
#   scripts/generated.sh generate DIR PATH... -- GENERATOR-ARGS...   rewrite DIR/PATH... from the spec
#   scripts/generated.sh check    DIR PATH... -- GENERATOR-ARGS...   fail if DIR/PATH... differ from a fresh run
#
# openapi-generator (scripts/openapi-generator.sh) runs on spec/openapi.yaml into a temp dir with
# GENERATOR-ARGS (everything but -i/-o); a PATH named `openapi.json` is the committed copy of
# spec/openapi.json a service embeds for GET /api-docs. Run from the service folder (DIR is
# relative to it).
source "$(dirname "$0")/lib.sh"
mode=$1 dir=$2; shift 2
paths=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do paths+=("$1"); shift; done
[ "${1:-}" = "--" ] || die "usage: $0 generate|check DIR PATH... -- GENERATOR-ARGS..."
shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$ROOT/scripts/openapi-generator.sh" generate -i "$ROOT/spec/openapi.yaml" -o "$tmp/out" "$@" > "$tmp/log" 2>&1 \
  || { cat "$tmp/log"; die "openapi-generator failed"; }
cp "$ROOT/spec/openapi.json" "$tmp/out/openapi.json"
case "$mode" in
  generate)
    for p in "${paths[@]}"; do rm -rf "${dir:?}/$p"; cp -r "$tmp/out/$p" "$dir/$p"; done
    echo "$dir/{$(IFS=,; echo "${paths[*]}")} regenerated from spec/openapi.yaml" ;;
  check)
    for p in "${paths[@]}"; do diff -ru "$tmp/out/$p" "$dir/$p" || die "$dir/$p differs from the spec: run make generate"; done
    echo "$dir/{$(IFS=,; echo "${paths[*]}")} match spec/openapi.yaml" ;;
  *) die "unknown mode $mode" ;;
esac
