# cityref kotlin-http4k: the service's fat jar on a jlink'd Temurin 25 runtime with an AOT cache from a
# training run (Dockerfiles/jvm/build.sh).
#
# Multi-stage, from source: `docker build -f Dockerfiles/kotlin-http4k.Dockerfile .` from the repository
# root needs nothing but Docker (BuildKit, for the cache mount). Stages:
#   build    the service's Maven build through the wrapper (services/mvnw, Maven 3.9.16;
#            services/.mvn/maven.config), as `make -C services/kotlin-http4k build` runs it,
#            its artifacts copied into /out/. `--build-context build=DIR` (scripts/images.sh
#            --prebuilt, what make test runs) skips this stage and takes /out/ from DIR instead:
#            the artifacts the bare build has already built and tested, in the same layout;
#   runtime  jlink'd runtime and AOT cache (Dockerfiles/jvm/build.sh), in the same JDK image;
#   final    both on a base with glibc and nothing else.
# BUILDER_IMAGE (a JDK 25) defaults to the official Temurin image; BASE_IMAGE to distroless. Nothing
# can be pulled where `make images` runs, so it passes local equivalents (Dockerfiles/README.md).
ARG BUILDER_IMAGE=docker.io/library/eclipse-temurin:25-jdk
ARG BASE_IMAGE=gcr.io/distroless/base-nossl-debian12:nonroot

FROM ${BUILDER_IMAGE} AS build
# The wrapper unpacks Maven's zip (the checksum it verifies is the zip's) with unzip, which the
# eclipse-temurin images lack.
RUN command -v unzip >/dev/null || { apt-get update && apt-get install -y --no-install-recommends unzip \
      && rm -rf /var/lib/apt/lists/*; }
WORKDIR /src/services/kotlin-http4k
COPY services/mvnw services/jvm.args /src/services/
COPY services/.mvn/ /src/services/.mvn/
COPY services/kotlin-shared/ /src/services/kotlin-shared/
COPY services/kotlin-http4k/ /src/services/kotlin-http4k/
# Maven itself and the dependencies persist between builds in a cache mount (HOME set: some
# builders, podman's among them, leave it unset for RUN).
RUN --mount=type=cache,target=/root/.m2 HOME=/root ../mvnw -q package -DskipTests \
    && mkdir -p /out && cp -r target/cityref-kotlin-http4k.jar /out/

FROM ${BUILDER_IMAGE} AS runtime
COPY Dockerfiles/jvm/ /build/
COPY services/jvm.args /app/
COPY --from=build /out/cityref-kotlin-http4k.jar /app/
RUN ADD_MODULES=java.xml sh /build/build.sh /app/cityref-kotlin-http4k.jar

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-kotlin-http4k" \
      org.opencontainers.image.description="cityref city service: Kotlin, http4k 6 (Jetty 12, virtual threads), elasticsearch-java" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=runtime /opt/jre /opt/jre
COPY --from=runtime /app /app
USER 65532:65532
ENV PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# The service's own health check mode (the spec): GET /health on 127.0.0.1:$PORT, no shell needed;
# a small, quick JVM (C1 only, serial GC, 16 MB heap), not the service's options or AOT cache.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/opt/jre/bin/java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx16m", \
       "-jar", "/app/cityref-kotlin-http4k.jar", "healthcheck"]
ENTRYPOINT ["/opt/jre/bin/java", "@/app/jvm.args", "-XX:AOTCache=/app/cityref.aot", \
            "-jar", "/app/cityref-kotlin-http4k.jar"]
