# cityref rust-actix: the service's static glibc binary on an empty base (no shell, no package
# manager). glibc 2.34+ resolves names from /etc/hosts and DNS without loading NSS modules.
#
# Multi-stage, from source: `docker build -f Dockerfiles/rust-actix.Dockerfile .` from the
# repository root needs nothing but Docker (BuildKit, for the cache mounts). The builder stage runs
# the service's own `make build` (services/rust-actix/Makefile: --locked, release, fat LTO,
# +crt-static). BUILDER_IMAGE defaults to the official Rust image of the toolchain the repository
# is tested with; `make images` passes a local builder made from the host's toolchain instead
# (Dockerfiles/README.md).
# `--build-context build=DIR` (scripts/images.sh --prebuilt, what make test runs) skips the builder
# stage and takes /out/cityref from DIR instead: the binary the bare build has already built and tested.
ARG BUILDER_IMAGE=docker.io/library/rust:1.95-bookworm

FROM ${BUILDER_IMAGE} AS build
WORKDIR /src/services/rust-actix
COPY spec/openapi.json /src/spec/openapi.json
COPY services/rust-actix/ /src/services/rust-actix/
# Downloaded crates and the target directory persist between builds in cache mounts; the binary
# is installed outside them, into /out.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/services/rust-actix/target \
    mkdir -p /out && make build BINARY=/out/cityref

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-rust-actix" \
      org.opencontainers.image.description="cityref city service: Rust, actix-web 4, official elasticsearch crate" \
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
