# cityref go-kit: the service's static binary (CGO_ENABLED=0; Go's own DNS resolver reads
# /etc/hosts and /etc/resolv.conf) on an empty base (no shell, no package manager).
#
# Multi-stage, from source: `docker build -f Dockerfiles/go-kit.Dockerfile .` from the repository
# root needs nothing but Docker (BuildKit, for the cache mounts). The builder stage runs the
# service's own `make build` (services/go-kit/Makefile: CGO_ENABLED=0, -trimpath, -s -w).
# BUILDER_IMAGE defaults to the official Go image of the toolchain the repository is tested with;
# `make images` passes a local builder made from the host's toolchain instead (Dockerfiles/README.md).
# `--build-context build=DIR` (scripts/images.sh --prebuilt, what make test runs) skips the builder
# stage and takes /out/cityref from DIR instead: the binary the bare build has already built and tested.
ARG BUILDER_IMAGE=docker.io/library/golang:1.26-bookworm

FROM ${BUILDER_IMAGE} AS build
WORKDIR /src/services/go-kit
COPY services/go-kit/ /src/services/go-kit/
# The module cache and the build cache persist between builds in cache mounts.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    mkdir -p /out && GOMODCACHE=/go/pkg/mod GOCACHE=/root/.cache/go-build make build BINARY=/out/cityref

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-go-kit" \
      org.opencontainers.image.description="cityref city service: Go, go-kit 0.13, go-elasticsearch v8" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build --chmod=0555 /out/cityref /cityref
USER 65532:65532
ENV PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# The binary's own health check mode (the spec): GET /health on 127.0.0.1:$PORT, no shell needed.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/cityref", "healthcheck"]
ENTRYPOINT ["/cityref"]
