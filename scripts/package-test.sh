#!/usr/bin/env bash
# The conformance suite as a third party uses it, end to end (make test, after the services are built
# and Elasticsearch is up):
#   1. builds the wheel of cityref-conformance (pyproject.toml, pinned hatchling) into out/package/,
#      downloads cached in .cache/pip;
#   2. installs it into a fresh venv in a temporary directory outside the repository, with
#      conformance/requirements.txt as constraints (the versions the checkout runs);
#   3. from another temporary directory standing in for the implementer's own repository (a copy of
#      the go-kit binary, its known-failures files), with PYTHONPATH unset:
#      - the packages are imported from the venv, not from the checkout; --service fails clearly;
#      (a) cityref-conformance load-fixture --es-url $ES;
#      (b) the full suite against ./cityref-go-kit with an empty known_failures list: exit 0, a JUnit
#          XML of more than 1000 testcases without failures or errors, default --out under ./out;
#      (c) --only golden with a known-failures file that lists golden/health, which passes: the run
#          must fail, the JUnit showing golden/health as a strict unexpected pass (the file is read);
#      (d) conformance/README.md's commands for another repository, verbatim (its block named
#          `installed`, run by scripts/doc_commands.py).
# Needs services/go-kit/bin/cityref-go-kit (make -C services/go-kit build) and Elasticsearch with
# network access to PyPI or a filled .cache/pip. ES_URL overrides `scripts/es.sh url`.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ES=${ES_URL:-$(scripts/es.sh url)}
BIN="$ROOT/services/go-kit/bin/cityref-go-kit"
[ -x "$BIN" ] || die "no $BIN: run make -C services/go-kit build first"
export PIP_CACHE_DIR="$CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1

TMP=$(mktemp -d -t cityref-package-test.XXXXXX)
case "$TMP/" in "$ROOT"/*) die "$TMP is inside the repository" ;; esac
VENV="$TMP/venv"
REPO="$TMP/other-repo"   # the implementer's repository
cleanup() {
  # the suite stops what it starts; anything left running from the copied binary is stopped here
  local exe pid
  for exe in /proc/[0-9]*/exe; do
    if [ "$(readlink "$exe" 2>/dev/null)" = "$REPO/cityref-go-kit" ]; then
      pid=${exe#/proc/}; pid=${pid%/exe}
      log "stopping leftover process $pid"
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$TMP"
}
trap cleanup EXIT

# junit FILE [CHECK]: "testcases failed errors skipped" of a JUnit XML, or with CHECK the failure
# message of the testcase whose property `check` is CHECK ("passed" when it has none).
junit() {
  python3 - "$@" <<'EOF'
import sys
import xml.etree.ElementTree as ET

cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
if len(sys.argv) > 2:
    for c in cases:
        if any(p.get("name") == "check" and p.get("value") == sys.argv[2] for p in c.iter("property")):
            bad = c.find("failure") if c.find("failure") is not None else c.find("error")
            print("passed" if bad is None else bad.get("message", "failed"))
            break
    else:
        print("absent")
else:
    def n(tag):
        return sum(c.find(tag) is not None for c in cases)

    print(len(cases), n("failure"), n("error"), n("skipped"))
EOF
}

log "1. wheel"
scripts/python.sh -c pass   # the project venv (its pip builds the wheel)
rm -rf "$OUT/package" && mkdir -p "$OUT/package"
"$CACHE/venv/bin/python" -m pip wheel -q --no-deps -w "$OUT/package" "$ROOT"
WHEEL=$(ls "$OUT"/package/cityref_conformance-*.whl)
log "built $WHEEL"

log "2. fresh venv in $VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -c "$ROOT/conformance/requirements.txt" "$WHEEL"

log "3. the other repository: $REPO"
mkdir -p "$REPO/.cityref"
cp "$BIN" "$REPO/cityref-go-kit"
cat > "$REPO/.cityref/known-failures.yaml" <<'EOF'
# known failures of this implementation (cityref-conformance --known-failures): none
known_failures: []
EOF
cat > "$REPO/.cityref/known-failures-stale.yaml" <<'EOF'
known_failures:
  - check: golden/health
    reason: listed on purpose although it passes; the strict xfail must fail the run
EOF
cd "$REPO"
unset PYTHONPATH
export PATH="$VENV/bin:$PATH"

where=$(python -c 'import conformance, cityref_tools.resources as r; print(conformance.__file__); print(r.path("spec/openapi.yaml")); print(r.checkout())')
log "imports: $(echo "$where" | paste -sd' ')"
while read -r line; do
  case "$line" in "$VENV"/*|None) ;; *) die "not from the venv: $line" ;; esac
done <<< "$where"
rc=0; cityref-conformance --service go-kit --es-url "$ES" 2> "$TMP/service.err" || rc=$?
if [ "$rc" != 2 ] || ! grep -q -- '--command' "$TMP/service.err"; then
  die "--service without a checkout: exit $rc, $(cat "$TMP/service.err")"
fi
log "--service without a checkout: exit 2, $(head -c 80 "$TMP/service.err")..."

log "(a) load-fixture"
rc_a=0; cityref-conformance load-fixture --es-url "$ES" || rc_a=$?
[ "$rc_a" = 0 ] || die "load-fixture: exit $rc_a"

log "(b) the full suite, no known failures"
rc_b=0
cityref-conformance --command ./cityref-go-kit --name go-kit-external --es-url "$ES" \
  --known-failures .cityref/known-failures.yaml --junit "$TMP/a.xml" || rc_b=$?
read -r n_b failed_b errors_b skipped_b <<< "$(junit "$TMP/a.xml")"
[ -d "$REPO/out/conformance/logs" ] || die "no default output directory $REPO/out/conformance"
[ "$rc_b" = 0 ] || die "full suite: exit $rc_b"
if [ "$n_b" -le 1000 ] || [ "$failed_b" != 0 ] || [ "$errors_b" != 0 ]; then
  die "full suite: $n_b testcases, $failed_b failures, $errors_b errors"
fi

log "(c) --only golden, a known failure that passes"
rc_c=0
cityref-conformance --command ./cityref-go-kit --name go-kit-external --es-url "$ES" --only golden \
  --known-failures .cityref/known-failures-stale.yaml --junit "$TMP/c.xml" > "$TMP/c.log" 2>&1 || rc_c=$?
read -r n_c failed_c _ _ <<< "$(junit "$TMP/c.xml")"
health=$(junit "$TMP/c.xml" golden/health)
tail -n 8 "$TMP/c.log"
[ "$rc_c" != 0 ] || die "a known failure that passes did not fail the run"
case "$health" in *XPASS*strict*) ;; *) die "golden/health in the JUnit: $health" ;; esac
[ "$failed_c" = 1 ] || die "(c): $failed_c failed testcases, expected only golden/health"

log "(d) conformance/README.md's block for another repository, verbatim (scripts/doc_commands.py)"
rc_d=0
python3 "$ROOT/scripts/doc_commands.py" run "$ROOT/conformance/README.md" --only installed --cwd "$REPO" \
  --logs "$OUT/results/doc-commands" || rc_d=$?
[ "$rc_d" = 0 ] || die "conformance/README.md's commands for another repository failed"

cd "$ROOT"
echo
echo "package test: $(basename "$WHEEL") installed in a fresh venv outside the repository"
echo "  (a) load-fixture                     exit $rc_a"
echo "  (b) full suite, no known failures    exit $rc_b; $n_b testcases, $failed_b failures, $errors_b errors, $skipped_b skipped"
echo "  (c) golden, golden/health listed     exit $rc_c; $n_c testcases, $failed_c failure: golden/health $health"
echo "  (d) conformance/README.md's commands exit $rc_d"
