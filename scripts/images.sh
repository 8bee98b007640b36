#!/usr/bin/env bash
# Container images of the services (Dockerfiles/README.md), built and run with podman, no daemon.
#   scripts/images.sh build [SERVICE...]  `make images`: native artifact (the service's `make
#                                         build`), then Dockerfiles/<svc>.Dockerfile; OCI archives
#                                         in images/; a table of size and build time
#   scripts/images.sh test [SERVICE...]   `make test-images`: each image under --cpus 1.5
#                                         --memory 512m: startup, idle memory, full conformance
#   scripts/images.sh bases               the two local base images the JVM Dockerfiles get here
# SERVICE defaults to every services/*/ with a Dockerfiles/<name>.Dockerfile.
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
BASE_IMAGE=localhost/cityref/base-glibc:bookworm
JDK_IMAGE=localhost/cityref/temurin:25-jdk

services() {  # the arguments, else $SERVICES (make … SERVICES=a,b), else every Dockerfile
  if [ $# -gt 0 ]; then echo "$@"; return; fi
  if [ -n "${SERVICES:-}" ]; then echo "${SERVICES//,/ }"; return; fi
  for f in Dockerfiles/*.Dockerfile; do basename "$f" .Dockerfile; done
}

is_jvm() { grep -q '^ARG JDK_IMAGE=' "Dockerfiles/$1.Dockerfile"; }

image_exists() { "$PODMAN" image exists "$1"; }

# The local stand-ins for the Dockerfiles' public defaults (nothing can be pulled here):
# BASE_IMAGE ~ distroless base-nossl (glibc, nothing else), JDK_IMAGE ~ eclipse-temurin:25-jdk
# (this machine's Temurin 25 at /opt/java/openjdk; a shell, and binutils for jlink --strip-debug).
bases() {
  command -v mmdebstrap >/dev/null || die "mmdebstrap missing (see .ci/run)"
  local tmp="$CACHE/image-bases"
  rm -rf "$tmp"; mkdir -p "$tmp"
  local mm=(mmdebstrap --quiet --variant=extract --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/man/*')
  if ! image_exists "$BASE_IMAGE"; then
    log "creating $BASE_IMAGE (mmdebstrap: libc6, libgcc-s1, base-files, netbase)"
    SOURCE_DATE_EPOCH=$TIMESTAMP "${mm[@]}" --include=libc6,libgcc-s1,base-files,netbase \
      bookworm "$tmp/base.tar" "$DEBIAN_MIRROR"
    "$PODMAN" import --quiet "$tmp/base.tar" "$BASE_IMAGE" >/dev/null
  fi
  if ! image_exists "$JDK_IMAGE"; then
    local jh; jh=$(java_home)
    log "creating $JDK_IMAGE (mmdebstrap + $jh)"
    # shellcheck disable=SC2016  # "$1" is mmdebstrap's: the hook gets the root directory as $1
    SOURCE_DATE_EPOCH=$TIMESTAMP "${mm[@]}" --include=libc6,libgcc-s1,base-files,dash,coreutils,findutils,binutils \
      --customize-hook='ln -sf dash "$1/bin/sh"' bookworm "$tmp/jdk-base.tar" "$DEBIAN_MIRROR"
    "$PODMAN" import --quiet "$tmp/jdk-base.tar" localhost/cityref/jdk-base:bookworm >/dev/null
    # -L: Debian's Temurin package links lib/security/cacerts to /etc/ssl/certs/java/cacerts.
    cp -rL "$jh" "$tmp/jdk" || die "copying $jh failed"
    printf '%s\n' 'FROM localhost/cityref/jdk-base:bookworm' 'COPY . /opt/java/openjdk' \
      'ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      | "$PODMAN" build --quiet --isolation chroot --pull=never --timestamp "$TIMESTAMP" -f - -t "$JDK_IMAGE" "$tmp/jdk" >/dev/null
    "$PODMAN" rmi localhost/cityref/jdk-base:bookworm >/dev/null
  fi
  rm -rf "$tmp"
}

build() {
  local list; list=$(services "$@")
  is_jvm_any=0; for s in $list; do is_jvm "$s" && is_jvm_any=1; done
  [ $is_jvm_any = 0 ] || bases
  mkdir -p "$ARCHIVES"
  local revision; revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  local rows=()
  for svc in $list; do
    [ -f "Dockerfiles/$svc.Dockerfile" ] || die "no Dockerfiles/$svc.Dockerfile"
    local t0=$SECONDS
    log "building $svc: native artifact (make -C services/$svc build)"
    make -C "services/$svc" --no-print-directory build >"$OUT/logs/image-$svc.build.log" 2>&1 \
      || { tail -30 "$OUT/logs/image-$svc.build.log" >&2; die "make -C services/$svc build failed"; }
    local t1=$SECONDS args=()
    is_jvm "$svc" && args+=(--build-arg "JDK_IMAGE=$JDK_IMAGE" --build-arg "BASE_IMAGE=$BASE_IMAGE")
    log "building $svc: image localhost/cityref/$svc:$TAG and :$VERSION"
    # --format docker keeps the Dockerfile's HEALTHCHECK (the OCI image format has no field for it;
    # the OCI archive below drops it, and compose and Kubernetes declare their own checks).
    "$PODMAN" build --quiet --format docker --isolation chroot --pull=never --network host --timestamp "$TIMESTAMP" \
      --layers=false "${args[@]}" --build-arg "VERSION=$VERSION" --build-arg "REVISION=$revision" \
      -f "Dockerfiles/$svc.Dockerfile" -t "localhost/cityref/$svc:$TAG" -t "localhost/cityref/$svc:$VERSION" . >/dev/null \
      || die "podman build of $svc failed"
    rm -f "$ARCHIVES/$svc.oci.tar"
    "$PODMAN" save --quiet --format oci-archive -o "$ARCHIVES/$svc.oci.tar" "localhost/cityref/$svc:$TAG"
    local size; size=$("$PODMAN" image inspect --format '{{.Size}}' "localhost/cityref/$svc:$TAG")
    rows+=("$(awk -v i="localhost/cityref/$svc:$TAG" -v s="$size" -v a="$(stat -c %s "$ARCHIVES/$svc.oci.tar")" \
      -v b="$((t1 - t0))" -v c="$((SECONDS - t1))" 'BEGIN { printf "%-34s %8.1f MB %8.1f MB %7ss %7ss", i, s / 1e6, a / 1e6, b, c }')")
  done
  echo
  printf '%-34s %11s %11s %8s %8s\n' image size archive artifact image
  printf '%s\n' "${rows[@]}"
  echo "archives: $ARCHIVES/<service>.oci.tar (podman load -i / docker load -i)"
}

test_images() {
  local list failed=0 es_url
  list=$(services "$@")
  scripts/es.sh up
  es_url=$(scripts/es.sh url)
  mkdir -p "$OUT/results"
  for svc in $list; do
    local image="localhost/cityref/$svc:$TAG"
    image_exists "$image" || die "$image missing: run make images first"
    log "=== image $svc: startup and idle memory"
    # Elasticsearch by host name, from the container's /etc/hosts: the image resolves names.
    scripts/python.sh scripts/image_probe.py --podman "$PODMAN" --image "$image" \
      --add-host "elasticsearch.cityref.test:127.0.0.1" --es-url "${es_url/127.0.0.1/elasticsearch.cityref.test}" \
      --json "$OUT/results/image-$svc.json" || failed=1
    log "=== image $svc: conformance"
    # The suite starts this command for each instance it needs, with PORT, ELASTICSEARCH_URL,
    # ELASTICSEARCH_TIMEOUT_MS and LOG_LEVEL in its environment (`-e NAME` passes them through).
    scripts/python.sh -m conformance --name "$svc" --es-url "$es_url" \
      --junit "$OUT/results/conformance-image-$svc.xml" --command "$PODMAN run --rm --pull=never \
      --network host --cpus 1.5 --memory 512m --memory-swap 512m --label cityref.test=1 \
      -e PORT -e ELASTICSEARCH_URL -e ELASTICSEARCH_TIMEOUT_MS -e LOG_LEVEL $image" || failed=1
    # Instances the suite had to SIGKILL leave their container behind (podman run is only the client).
    "$PODMAN" ps -aq --filter label=cityref.test=1 | xargs -r "$PODMAN" rm -f >/dev/null
  done
  log "=== images: differential (the same generated hostile requests to every image at once)"
  local diff_args=()
  for svc in $list; do
    diff_args+=(--command "$svc=$PODMAN run --rm --pull=never --network host --cpus 1.5 --memory 512m \
      --memory-swap 512m --label cityref.test=1 -e PORT -e ELASTICSEARCH_URL -e LOG_LEVEL localhost/cityref/$svc:$TAG")
  done
  scripts/python.sh -m conformance differential --es-url "$es_url" --out "$OUT/results/differential-images" "${diff_args[@]}" \
    || failed=1
  "$PODMAN" ps -aq --filter label=cityref.test=1 | xargs -r "$PODMAN" rm -f >/dev/null
  local tables=(); for svc in $list; do tables+=("$OUT/results/image-$svc.json"); done
  scripts/python.sh scripts/image_probe.py --table "${tables[@]}"
  return $failed
}

case "${1:-}" in
  build) shift; build "$@" ;;
  test) shift; test_images "$@" ;;
  bases) bases ;;
  *) die "usage: $0 build|test|bases [SERVICE...]" ;;
esac
