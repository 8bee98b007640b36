#!/usr/bin/env bash
# Runs Python from the project venv (.cache/venv), creating or updating it from the pinned
# conformance/requirements.txt (the suite) and tools/python/requirements.txt (linters, validators)
# when either changes.
source "$(dirname "$0")/lib.sh"
VENV="$CACHE/venv"
REQS=("$ROOT/conformance/requirements.txt" "$ROOT/tools/python/requirements.txt")
STAMP="$VENV/.requirements.sha256"
want=$(cat "${REQS[@]}" | sha256sum | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  log "installing Python packages into $VENV"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r "${REQS[0]}" -r "${REQS[1]}"
  echo "$want" > "$STAMP"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"   # cityref_tools/, shared by the suite, bench and scripts
exec "$VENV/bin/python" "$@"
