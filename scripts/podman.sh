#!/usr/bin/env bash
# podman with this project's settings: tools/containers/containers.conf, image storage under the
# ignored .cache/containers. Usage: scripts/podman.sh <podman arguments>
source "$(dirname "$0")/lib.sh"
need_tool podman "$IMAGE_TOOLS_FIX"
export CONTAINERS_CONF="$ROOT/tools/containers/containers.conf"
exec podman --root "$CACHE/containers/root" --runroot "$CACHE/containers/run" \
  --runtime runc --cgroup-manager cgroupfs "$@"
