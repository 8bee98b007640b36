# cityref kotlin-ktor: the service's fat jar on a jlink'd Temurin 25 runtime with an AOT cache
# from a training run (Dockerfiles/jvm/build.sh). Build context: the repository root, after
# `make -C services/kotlin-ktor build` (Dockerfiles/README.md; `make images` does both and
# passes local JDK_IMAGE/BASE_IMAGE, since nothing can be pulled there).
ARG JDK_IMAGE=eclipse-temurin:25-jdk
ARG BASE_IMAGE=gcr.io/distroless/base-nossl-debian12:nonroot

FROM ${JDK_IMAGE} AS build
COPY Dockerfiles/jvm/ /build/
COPY services/jvm.args services/kotlin-ktor/target/cityref-kotlin-ktor.jar /app/
RUN sh /build/build.sh /app/cityref-kotlin-ktor.jar

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-kotlin-ktor" \
      org.opencontainers.image.description="cityref city service: Kotlin, Ktor 3 (Netty), elasticsearch-java" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /opt/jre /opt/jre
COPY --from=build /app /app
USER 65532:65532
ENV PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# The service's own health check mode (the spec): GET /health on 127.0.0.1:$PORT, no shell needed;
# a small, quick JVM (C1 only, serial GC, 16 MB heap), not the service's options or AOT cache.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/opt/jre/bin/java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx16m", \
       "-jar", "/app/cityref-kotlin-ktor.jar", "healthcheck"]
ENTRYPOINT ["/opt/jre/bin/java", "@/app/jvm.args", "-XX:AOTCache=/app/cityref.aot", \
            "-jar", "/app/cityref-kotlin-ktor.jar"]
