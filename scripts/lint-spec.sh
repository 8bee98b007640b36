#!/usr/bin/env bash
# Lints the contract: Spectral's OAS ruleset (pinned in tools/lint), the OpenAPI schema
# validator, and the drift check between spec/openapi.yaml and the committed spec/openapi.json.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ ! -x tools/lint/node_modules/.bin/spectral ] || [ tools/lint/package-lock.json -nt tools/lint/node_modules/.package-lock.json ]; then
  log "installing Spectral (tools/lint)"
  npm ci --prefix tools/lint --no-audit --no-fund --loglevel=error
fi
tools/lint/node_modules/.bin/spectral lint spec/openapi.yaml --fail-severity=warn
scripts/python.sh -m openapi_spec_validator spec/openapi.yaml
scripts/python.sh scripts/spec_json.py --check
