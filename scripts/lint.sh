#!/usr/bin/env bash
# The repository's own linters (the services run theirs in their `make test`):
#   ruff (lint and format check) over the Python: conformance/, bench/, cityref_tools/, data/, scripts/
#     (settings in pyproject.toml);
#   the shell scripts (scripts/, .ci/run, services/*/run.sh, the upstream reproductions) through shellcheck (settings in .shellcheckrc).
# Fix with: .cache/venv/bin/ruff check --fix . && .cache/venv/bin/ruff format .
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ruff="$CACHE/venv/bin/ruff"
scripts/python.sh -c pass   # the project venv, with ruff pinned in tools/python/requirements.txt
if ! command -v shellcheck >/dev/null; then
  [ "$(id -u)" = 0 ] || die "shellcheck missing: apt-get install shellcheck"
  log "installing shellcheck (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null; }
fi
rc=0
"$ruff" check . || rc=1
"$ruff" format --check . || rc=1
shellcheck scripts/*.sh .ci/run services/*/run.sh docs/upstream/repro/*/repro.sh || rc=1
[ $rc = 0 ] && log "lint: ruff and shellcheck clean"
exit $rc
