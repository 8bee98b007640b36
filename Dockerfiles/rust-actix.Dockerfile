# cityref rust-actix: the service's static glibc binary on an empty base (no shell, no package
# manager). glibc 2.34+ resolves names from /etc/hosts and DNS without loading NSS modules.
# Build context: the repository root, after `make -C services/rust-actix build`
# (Dockerfiles/README.md; `make images` does both).
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-rust-actix" \
      org.opencontainers.image.description="cityref city service: Rust, actix-web 4, official elasticsearch crate" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --chmod=0555 services/rust-actix/target/cityref-rust-actix /cityref
USER 65532:65532
ENV PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# The binary's own health check mode (the spec): GET /health on 127.0.0.1:$PORT, no shell needed.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/cityref", "healthcheck"]
ENTRYPOINT ["/cityref"]
