#!/usr/bin/env bash
# podman with this project's settings: tools/containers/containers.conf, image storage in the user's
# cache (~/.cache/cityref/containers, scripts/lib.sh), so that a new clone reuses the local base
# images and the builds' cache mounts. Usage: scripts/podman.sh <podman arguments>
source "$(dirname "$0")/lib.sh"
need_tool podman "$IMAGE_TOOLS_FIX"
export CONTAINERS_CONF="$ROOT/tools/containers/containers.conf"
exec podman --root "$USER_CACHE/containers/root" --runroot "$USER_CACHE/containers/run" \
  --runtime runc --cgroup-manager cgroupfs "$@"
