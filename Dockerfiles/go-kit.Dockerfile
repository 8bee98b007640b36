# cityref go-kit: the service's static binary (CGO_ENABLED=0; Go's own DNS resolver reads
# /etc/hosts and /etc/resolv.conf) on an empty base (no shell, no package manager).
# Build context: the repository root, after `make -C services/go-kit build`
# (Dockerfiles/README.md; `make images` does both).
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-go-kit" \
      org.opencontainers.image.description="cityref city service: Go, go-kit 0.13, go-elasticsearch v8" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --chmod=0555 services/go-kit/bin/cityref-go-kit /cityref
USER 65532:65532
ENV PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# The binary's own health check mode (the spec): GET /health on 127.0.0.1:$PORT, no shell needed.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/cityref", "healthcheck"]
ENTRYPOINT ["/cityref"]
