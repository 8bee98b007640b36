#!/usr/bin/env bash
# Container images of the services (Dockerfiles/README.md), built and run with podman, no daemon.
#   scripts/images.sh build [--prebuilt] [IMAGE...]
#                                         `make images`: each Dockerfiles/<image>.Dockerfile built
#                                         from source (multi-stage); OCI archives in out/images/;
#                                         a table of size and build time. --prebuilt (make test):
#                                         a service's builder stage is replaced by the artifact its
#                                         bare build made (`make -C services/<svc> build`, already
#                                         built and tested), laid out as that stage's /out/ and
#                                         given as `--build-context build=DIR`: the same binary or
#                                         jar in the image, compiled once
#   scripts/images.sh source-check SERVICE
#                                         the from-source path kept honest: SERVICE's builder stage
#                                         built from source (--target build) and its /out/ compared
#                                         with what --prebuilt gives it (the same files; dependency
#                                         jars byte for byte)
#   scripts/images.sh test [SERVICE...]   `make test-images`: each service image under --cpus 1.5
#                                         --memory 512m: startup, idle memory, full conformance
#                                         (tracing off; TRACES=1: on, into `make traces`);
#                                         the JVM images' startup budget; then compose.yaml end to
#                                         end (scripts/compose-test.sh)
#   scripts/images.sh budget [SERVICE...] `make startup-budget`: each JVM image's startup budget per
#                                         phase, with and without its AOT cache (also part of test)
#   scripts/images.sh bases [NAME...]     the local builder and base images the Dockerfiles get here
#                                         (base jdk rust go python; default: all)
# IMAGE defaults to every service with a Dockerfile (SERVICES=a,b: those) plus the two that are not
# services: elasticsearch (compose's backend) and conformance (the suite, and compose's fixture
# loader).
# A missing prerequisite is one line on stderr and exit 2: podman (every command) and mmdebstrap
# (build, bases) up front, the images to test before Elasticsearch starts (test, budget), a JDK 25+
# when the local JDK image is made.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PODMAN="$ROOT/scripts/podman.sh"
ARCHIVES="$OUT/images"
# Every image is tagged $TAG (latest unless IMAGE_TAG says otherwise) and with its version, which is
# also its org.opencontainers.image.version label: `git describe --tags --always --dirty` (the
# nearest tag, commits since and the commit; the commit alone while the repository has no tag).
TAG=${IMAGE_TAG:-latest}
VERSION=$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo unknown)
# One fixed timestamp for every file and the image config: reproducible layers. The JVM
# Dockerfiles set the same mtime (0) on what their AOT cache records.
TIMESTAMP=0
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

AUX_IMAGES="elasticsearch conformance"

services() {  # the arguments, else $SERVICES (make … SERVICES=a,b), else every service with a Dockerfile
  if [ $# -gt 0 ]; then echo "$@"; return; fi
  if [ -n "${SERVICES:-}" ]; then echo "${SERVICES//,/ }"; return; fi
  for f in Dockerfiles/*.Dockerfile; do
    local name; name=$(basename "$f" .Dockerfile)
    [ ! -f "services/$name/cityref.yaml" ] || echo "$name"
  done
}

image_exists() { "$PODMAN" image exists "$1"; }

# Nothing can be pulled here, so the Dockerfiles' public FROM images get local equivalents, made
# once with mmdebstrap from Debian's mirror plus this machine's toolchains. Their tags carry a hash
# of their recipe (debian_image to bases below), so changing it makes new ones.
#   BASE_IMAGE     ~ distroless base-nossl: glibc and nothing else (runtime of the JVM images)
#   JDK_IMAGE      ~ eclipse-temurin:25-jdk: this machine's Temurin 25 at /opt/java/openjdk with a
#                    shell, binutils (jlink --strip-debug), curl and unzip (the Maven wrapper); the
#                    builder of the JVM images and the base of the Elasticsearch image
#   RUST_BUILDER   ~ rust:<version>-bookworm: this machine's Rust toolchain, gcc, make
#   GO_BUILDER     ~ golang:<version>-bookworm: this machine's Go, make
#   PYTHON_IMAGE   ~ python:3.11-slim-bookworm: Debian's Python 3.11 with venv (the suite's image)
# Every builder gets the host's CA bundle (and the JDK its cacerts), so that the registries are
# reached the way the host reaches them.
BASES_REV=$(sed -n '/^debian_image() {/,/^# (end of the recipe of the local images/p' "$ROOT/scripts/images.sh" | sha256sum | cut -c1-8)
BASE_IMAGE=localhost/cityref/base-glibc:bookworm-$BASES_REV
JDK_IMAGE=localhost/cityref/temurin:25-jdk-$BASES_REV
RUST_BUILDER=localhost/cityref/rust-builder:$BASES_REV
GO_BUILDER=localhost/cityref/go-builder:$BASES_REV
PYTHON_IMAGE=localhost/cityref/python:3.11-$BASES_REV
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

# The OpenTelemetry variables the suite sets on a traced instance, passed into its container.
OTEL_PASS="-e OTEL_TRACES_EXPORTER -e OTEL_EXPORTER_OTLP_ENDPOINT -e OTEL_EXPORTER_OTLP_PROTOCOL -e OTEL_SERVICE_NAME \
-e OTEL_BSP_SCHEDULE_DELAY"

# The build arguments that point a Dockerfile's FROM lines at those local images.
build_args() {
  case $1 in
    rust-actix) echo "--build-arg BUILDER_IMAGE=$RUST_BUILDER" ;;
    go-kit) echo "--build-arg BUILDER_IMAGE=$GO_BUILDER" ;;
    elasticsearch) echo "--build-arg BUILDER_IMAGE=$JDK_IMAGE --build-arg BASE_IMAGE=$JDK_IMAGE" ;;
    conformance) echo "--build-arg BUILDER_IMAGE=$PYTHON_IMAGE --build-arg BASE_IMAGE=$PYTHON_IMAGE" ;;
    *) echo "--build-arg BUILDER_IMAGE=$JDK_IMAGE --build-arg BASE_IMAGE=$BASE_IMAGE" ;;
  esac
}

# mmdebstrap --variant=extract of bookworm with the given packages, imported as image $1.
debian_image() {
  local image=$1 packages=$2 tmp="$CACHE/image-bases"; shift 2
  command -v mmdebstrap >/dev/null || die "mmdebstrap missing (see .ci/run)"
  rm -rf "$tmp"; mkdir -p "$tmp"
  log "creating $image (mmdebstrap: $packages)"
  SOURCE_DATE_EPOCH=$TIMESTAMP mmdebstrap --quiet --variant=extract --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --include="$packages" "$@" bookworm "$tmp/root.tar" "$DEBIAN_MIRROR"
  "$PODMAN" import --quiet "$tmp/root.tar" "$image" >/dev/null
  rm -rf "$tmp"
}

# An image FROM $1 with directory $3 as context, per the Dockerfile lines on stdin, tagged $2.
derived_image() {
  { echo "FROM $1"; cat; } | "$PODMAN" build --quiet --isolation chroot --pull=never --timestamp "$TIMESTAMP" \
    --layers=false -f - -t "$2" "$3" >/dev/null
}

# toolchain_image IMAGE PACKAGES [SOURCE TARGET]... -- [DOCKERFILE LINE]...: a Debian image with
# PACKAGES, the host's CA bundle, and each SOURCE directory copied in at TARGET (links followed:
# Debian's Temurin links its cacerts to /etc/ssl/certs/java/cacerts), then the given lines.
toolchain_image() {
  local image=$1 packages=$2 ctx="$CACHE/image-bases-ctx" lines=() n=0; shift 2
  debian_image "$image-os" "$packages"
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp "$CA_BUNDLE" "$ctx/ca.crt" || die "no $CA_BUNDLE"
  while [ "$1" != -- ]; do
    { mkdir -p "$ctx/$n" && cp -rL "$1" "$ctx/$n/"; } || die "copying $1 failed"
    lines+=("COPY $n/$(basename "$1") $2"); n=$((n + 1)); shift 2
  done
  shift
  printf '%s\n' "${lines[@]}" "COPY ca.crt $CA_BUNDLE" "$@" | derived_image "$image-os" "$image" "$ctx"
  "$PODMAN" rmi "$image-os" >/dev/null
  rm -rf "$ctx"
}

bases() {
  local want=" $* " path=/usr/sbin:/usr/bin:/sbin:/bin
  if [[ $want == *" base "* ]] && ! image_exists "$BASE_IMAGE"; then
    debian_image "$BASE_IMAGE" libc6,libgcc-s1,base-files,netbase
  fi
  if [[ $want == *" jdk "* ]] && ! image_exists "$JDK_IMAGE"; then
    local jh; jh=$(java_home)
    toolchain_image "$JDK_IMAGE" libc6,libgcc-s1,base-files,netbase,bash,dash,coreutils,findutils,grep,sed,gzip,tar,binutils,curl,unzip \
      "$jh" /opt/java/openjdk -- "ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:$path"
  fi
  if [[ $want == *" rust "* ]] && ! image_exists "$RUST_BUILDER"; then
    local sysroot; sysroot=$(rustc --print sysroot) || die "no Rust toolchain (rustup: https://rustup.rs)"
    # The toolchain without its documentation (share/doc is most of its size). cc: the alternative
    # gcc's maintainer script would make (extract runs none; /bin/sh is dash's own link).
    toolchain_image "$RUST_BUILDER" libc6,libc6-dev,gcc,make,base-files,coreutils,dash,findutils,grep,sed \
      "$sysroot/bin" /usr/local/rust/bin "$sysroot/lib" /usr/local/rust/lib "$sysroot/libexec" /usr/local/rust/libexec -- \
      'RUN ["/bin/ln", "-s", "gcc", "/usr/bin/cc"]' \
      "ENV CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:/usr/local/rust/bin:$path"
  fi
  if [[ $want == *" go "* ]] && ! image_exists "$GO_BUILDER"; then
    local goroot; goroot=$(go env GOROOT) || die "no Go toolchain (https://go.dev/doc/install)"
    toolchain_image "$GO_BUILDER" libc6,make,base-files,coreutils,dash,findutils,grep,sed \
      "$goroot" /usr/local/go -- "ENV GOPATH=/go GOTOOLCHAIN=local PATH=/go/bin:/usr/local/go/bin:$path"
  fi
  if [[ $want == *" python "* ]] && ! image_exists "$PYTHON_IMAGE"; then
    toolchain_image "$PYTHON_IMAGE" libc6,base-files,netbase,dash,coreutils,python3,python3-venv -- \
      "ENV PIP_CERT=$CA_BUNDLE"
  fi
}
# (end of the recipe of the local images: BASES_REV hashes everything from debian_image() to here)

# Which local bases an image's build needs.
needs() {
  case $1 in
    rust-actix) echo rust ;;
    go-kit) echo go ;;
    elasticsearch) echo jdk ;;
    conformance) echo python ;;
    *) echo jdk base ;;
  esac
}

# need_images SERVICE...: each one's image exists (tagged $TAG), else need_fail.
need_images() {
  local svc fix="make images"
  [ "$TAG" = latest ] || fix="IMAGE_TAG=$TAG make images"
  for svc in "$@"; do
    image_exists "localhost/cityref/$svc:$TAG" || need_fail "image localhost/cityref/$svc:$TAG not built" "$fix"
  done
}

# prebuilt SERVICE DIR: the artifacts of SERVICE's bare build in DIR/out/, laid out as its Dockerfile's
# builder stage leaves them in /out/ (its descriptor's `artifacts`, SOURCE:PATH; source-check
# compares the two); false for an image without them, exit 2 when one is missing.
prebuilt() {
  local svc=$1 dir=$2 files f
  [ -f "services/$svc/cityref.yaml" ] || return 1
  files=$(scripts/python.sh scripts/services.py get "$svc" artifacts 2>/dev/null) || return 1
  rm -rf "$dir"; mkdir -p "$dir/out"   # DIR stands for the stage's root
  for f in $files; do
    [ -e "services/$svc/${f%%:*}" ] \
      || need_fail "services/$svc/${f%%:*} missing (--prebuilt takes the bare build's artifact)" "make -C services/$svc build"
    cp -r "services/$svc/${f%%:*}" "$dir/out/${f#*:}"
  done
}

build() {
  need_tool mmdebstrap "$IMAGE_TOOLS_FIX"
  local from=source
  if [ "${1:-}" = --prebuilt ]; then from=prebuilt; shift; fi
  local list; list=$(if [ $# -gt 0 ]; then echo "$@"; else echo "$(services) $AUX_IMAGES"; fi)
  local need=()
  for s in $list; do
    # --prebuilt: a static binary's image needs no builder (its builder stage is skipped)
    [[ $from = prebuilt && $s =~ ^(go-kit|rust-actix)$ ]] && continue
    read -ra n <<<"$(needs "$s")"; need+=("${n[@]}")
  done
  # local images of an older recipe (another hash in their tag) are not used any more
  "$PODMAN" images --format '{{.Repository}}:{{.Tag}}' \
    | grep -E '^localhost/cityref/(base-glibc|temurin|rust-builder|go-builder|python):' | grep -v -- "$BASES_REV" \
    | xargs -r "$PODMAN" rmi >/dev/null 2>&1 || true
  bases "${need[@]}"
  mkdir -p "$ARCHIVES" "$OUT/logs"
  local revision; revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  local rows=()
  for svc in $list; do
    [ -f "Dockerfiles/$svc.Dockerfile" ] || die "no Dockerfiles/$svc.Dockerfile"
    local t0=$SECONDS args
    read -ra args <<<"$(build_args "$svc")"
    local tags=(-t "localhost/cityref/$svc:$TAG" -t "localhost/cityref/$svc:$VERSION")
    if [ "$svc" = elasticsearch ]; then  # the same distribution as scripts/es.sh, tagged with its version
      local es_version es_sha256; read -r es_version es_sha256 <<<"$(scripts/es.sh dist)"
      grep -q "^ARG ES_VERSION=$es_version\$" Dockerfiles/elasticsearch.Dockerfile \
        || die "Dockerfiles/elasticsearch.Dockerfile's ES_VERSION differs from scripts/es.sh's ($es_version)"
      grep -q "^ARG ES_SHA256=$es_sha256\$" Dockerfiles/elasticsearch.Dockerfile \
        || die "Dockerfiles/elasticsearch.Dockerfile's ES_SHA256 differs from scripts/es.sh's"
      tags=(-t "localhost/cityref/$svc:$TAG" -t "localhost/cityref/$svc:$es_version")
    fi
    local how="from source"
    if [ $from = prebuilt ] && prebuilt "$svc" "$OUT/prebuilt/$svc"; then
      args+=(--build-context "build=$OUT/prebuilt/$svc"); how="from its bare build's artifact (out/prebuilt/$svc)"
    fi
    log "building $svc $how: image localhost/cityref/$svc:$TAG and :$VERSION (log: out/logs/image-$svc.build.log)"
    # --format docker keeps the Dockerfile's HEALTHCHECK (the OCI image format has no field for it;
    # the OCI archive below drops it, and compose and Kubernetes declare their own checks).
    "$PODMAN" build --format docker --isolation chroot --pull=never --network host --timestamp "$TIMESTAMP" \
      --layers=false "${args[@]}" --build-arg "VERSION=$VERSION" --build-arg "REVISION=$revision" \
      -f "Dockerfiles/$svc.Dockerfile" "${tags[@]}" . \
      >"$OUT/logs/image-$svc.build.log" 2>&1 \
      || { tail -30 "$OUT/logs/image-$svc.build.log" >&2; die "podman build of $svc failed"; }
    rm -f "$ARCHIVES/$svc.oci.tar"
    # an OCI archive holds one name: the one its users run (Elasticsearch's is its version, as in compose.yaml)
    local name="${tags[3]}"; [ "$svc" = elasticsearch ] || name="${tags[1]}"
    "$PODMAN" save --quiet --format oci-archive -o "$ARCHIVES/$svc.oci.tar" "$name"
    local size; size=$("$PODMAN" image inspect --format '{{.Size}}' "localhost/cityref/$svc:$TAG")
    rows+=("$(awk -v i="localhost/cityref/$svc:$TAG" -v s="$size" -v a="$(stat -c %s "$ARCHIVES/$svc.oci.tar")" \
      -v b="$((SECONDS - t0))" 'BEGIN { printf "%-42s %8.1f MB %8.1f MB %7ss", i, s / 1e6, a / 1e6, b }')")
  done
  echo
  printf '%-42s %11s %11s %8s\n' image size archive build
  printf '%s\n' "${rows[@]}"
  echo "archives: $ARCHIVES/<image>.oci.tar (podman load -i / docker load -i)"
}

test_images() {
  local list failed=0 es_url
  list=$(services "$@")
  # shellcheck disable=SC2086  # one word per service
  need_images $list
  scripts/es.sh up
  es_url=$(scripts/es.sh url)
  mkdir -p "$OUT/results"
  # TRACES=1: the images run the suite with tracing on, into the trace backend (make traces)
  local trace_args=()
  if [ -n "${TRACES:-}" ]; then
    scripts/traces.sh up
    trace_args=(--traces "$(scripts/traces.sh url)" --otlp-url "$(scripts/traces.sh otlp)")
  fi
  for svc in $list; do
    local image="localhost/cityref/$svc:$TAG"
    log "=== image $svc: startup and idle memory"
    # Elasticsearch by host name, from the container's /etc/hosts: the image resolves names.
    scripts/python.sh scripts/image_probe.py --podman "$PODMAN" --image "$image" \
      --add-host "elasticsearch.cityref.test:127.0.0.1" --es-url "${es_url/127.0.0.1/elasticsearch.cityref.test}" \
      --json "$OUT/results/image-$svc.json" || failed=1
    log "=== image $svc: conformance${trace_args[*]:+ (tracing on)}"
    # The suite starts this command for each instance it needs, with PORT, ELASTICSEARCH_URL,
    # ELASTICSEARCH_TIMEOUT_MS, LOG_LEVEL and the OTEL_* variables in its environment (`-e NAME`
    # passes a variable through when it is set).
    scripts/python.sh -m conformance --name "$svc" --es-url "$es_url" "${trace_args[@]}" \
      --junit "$OUT/results/conformance-image-$svc.xml" --command "$PODMAN run --rm --pull=never \
      --network host --cpus 1.5 --memory 512m --memory-swap 512m --label cityref.test=1 \
      -e PORT -e ELASTICSEARCH_URL -e ELASTICSEARCH_TIMEOUT_MS -e LOG_LEVEL $OTEL_PASS $image" || failed=1
    # Instances the suite had to SIGKILL leave their container behind (podman run is only the client).
    "$PODMAN" ps -aq --filter label=cityref.test=1 | xargs -r "$PODMAN" rm -f >/dev/null
  done
  # The desync tier (--grammar) and the fixed cases, as make test sends them to the bare builds, and
  # the first 1,000 of the seed's generated requests: the images hold those same builds, whose
  # answers to all 5,000 the bare run has checked; here the question is whether the container and
  # its limits change any of them.
  log "=== images: differential (the desync tier, the fixed cases and 1,000 generated requests to every image at once)"
  local diff_args=()
  for svc in $list; do
    diff_args+=(--command "$svc=$PODMAN run --rm --pull=never --network host --cpus 1.5 --memory 512m \
      --memory-swap 512m --label cityref.test=1 -e PORT -e ELASTICSEARCH_URL -e LOG_LEVEL localhost/cityref/$svc:$TAG")
  done
  scripts/python.sh -m conformance differential --grammar --count 1000 --es-url "$es_url" \
    --out "$OUT/results/differential-images" "${diff_args[@]}" || failed=1
  "$PODMAN" ps -aq --filter label=cityref.test=1 | xargs -r "$PODMAN" rm -f >/dev/null
  local tables=(); for svc in $list; do tables+=("$OUT/results/image-$svc.json"); done
  scripts/python.sh scripts/image_probe.py --table "${tables[@]}"
  budget "$@" || failed=1
  log "=== compose.yaml: up, fixture, health checks, conformance through compose, down"
  scripts/compose-test.sh || failed=1
  return $failed
}

# A listing of directory $1: one line per file, its path and, for jars of dependencies (lib/,
# libs/) and anything but the service's own artifact, its sha256 (the service's own jar or binary
# carries build timestamps; its name and presence are compared).
listing() {
  (cd "$1" && find . -type f | sort | while read -r f; do
    case $f in ./cityref|./cityref-*.jar) echo "$f" ;; *) echo "$f $(sha256sum <"$f" | cut -c1-16)" ;; esac
  done)
}

source_check() {
  local svc=$1; local dir="$OUT/source-check/$svc"
  [ -f "Dockerfiles/$svc.Dockerfile" ] || die "no Dockerfiles/$svc.Dockerfile"
  need_tool mmdebstrap "$IMAGE_TOOLS_FIX"
  local need; read -ra need <<<"$(needs "$svc")"; bases "${need[@]}"
  rm -rf "$dir"; mkdir -p "$dir"
  prebuilt "$svc" "$dir/prebuilt"
  local args; read -ra args <<<"$(build_args "$svc")"
  log "building $svc's builder stage from source (--target build; log: out/logs/image-$svc.source.log)"
  "$PODMAN" build --isolation chroot --pull=never --network host --layers=false "${args[@]}" --target build \
    -f "Dockerfiles/$svc.Dockerfile" -t "localhost/cityref/$svc:source-check" . >"$OUT/logs/image-$svc.source.log" 2>&1 \
    || { tail -30 "$OUT/logs/image-$svc.source.log" >&2; die "podman build --target build of $svc failed"; }
  local cid; cid=$("$PODMAN" create "localhost/cityref/$svc:source-check" /bin/true)
  mkdir -p "$dir/source"
  "$PODMAN" export "$cid" | tar -x -C "$dir/source" out
  "$PODMAN" rm "$cid" >/dev/null; "$PODMAN" rmi "localhost/cityref/$svc:source-check" >/dev/null
  listing "$dir/source/out" >"$dir/source.txt"; listing "$dir/prebuilt/out" >"$dir/prebuilt.txt"
  if ! diff -u "$dir/source.txt" "$dir/prebuilt.txt"; then
    die "$svc: the from-source builder stage's /out/ (-) differs from --prebuilt's (+)"
  fi
  log "$svc: the from-source builder stage and --prebuilt give the same $(wc -l <"$dir/source.txt") files"
}

budget() {  # the JVM images' startup budget, with and without their AOT cache (scripts/startup_budget.py)
  local list es_url files=()
  list=$(services "$@")
  # shellcheck disable=SC2086  # one word per service
  need_images $list
  scripts/es.sh up >/dev/null
  es_url=$(scripts/es.sh url)
  mkdir -p "$OUT/results"
  for svc in $list; do
    grep -q "Dockerfiles/jvm/" "Dockerfiles/$svc.Dockerfile" || continue  # the JVM images only
    log "=== image $svc: startup budget, with and without the AOT cache"
    scripts/python.sh scripts/startup_budget.py --podman "$PODMAN" --image "localhost/cityref/$svc:$TAG" \
      --es-url "$es_url" --json "$OUT/results/startup-budget-$svc.json" >/dev/null || return 1
    files+=("$OUT/results/startup-budget-$svc.json")
  done
  [ ${#files[@]} = 0 ] || scripts/python.sh scripts/startup_budget.py --table "${files[@]}"
}

[[ ${1:-} =~ ^(build|test|budget|bases|source-check)$ ]] || die "usage: $0 build [--prebuilt]|test|budget|bases|source-check [SERVICE...]"
need_tool podman "$IMAGE_TOOLS_FIX"
case "$1" in
  build) shift; build "$@" ;;
  test) shift; test_images "$@" ;;
  budget) shift; budget "$@" ;;
  source-check) shift; [ $# = 1 ] || die "usage: $0 source-check SERVICE"; source_check "$1" ;;
  bases) shift; need_tool mmdebstrap "$IMAGE_TOOLS_FIX"; if [ $# -gt 0 ]; then bases "$@"; else bases base jdk rust go python; fi ;;
esac
