# cityref java-spring-boot: the Spring Boot application, extracted as Spring Boot recommends for the AOT
# cache (the application jar and lib/ beside it), on a jlink'd Temurin 25 runtime with Spring's
# the JDK's AOT cache from a training run (Dockerfiles/jvm/build.sh).
#
# Multi-stage, from source: `docker build -f Dockerfiles/java-spring-boot.Dockerfile .` from the
# repository root needs nothing but Docker (BuildKit, for the cache mount). Stages:
#   build    the service's Maven build through the wrapper (services/mvnw, Maven 3.9.16;
#            services/.mvn/maven.config), as `make -C services/java-spring-boot build` runs it: the
#            executable jar, its artifacts copied into /out/. `--build-context build=DIR` (scripts/images.sh
#            --prebuilt, what make test runs) skips this stage and takes /out/ from DIR instead:
#            the artifacts the bare build has already built and tested, in the same layout;
#   runtime  the jar extracted (`java -Djarmode=tools -jar … extract`: nested jars cannot be in an
#            AOT cache), the jlink'd runtime and the AOT cache, in the same JDK image;
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
WORKDIR /src/services/java-spring-boot
COPY services/mvnw services/jvm.args /src/services/
COPY services/.mvn/ /src/services/.mvn/
COPY services/java-shared/ /src/services/java-shared/
COPY services/java-spring-boot/ /src/services/java-spring-boot/
# Maven itself and the dependencies persist between builds in a cache mount (HOME set: some
# builders, podman's among them, leave it unset for RUN).
RUN --mount=type=cache,target=/root/.m2 HOME=/root ../mvnw -q package -DskipTests \
    && mkdir -p /out && cp -r target/cityref-java-spring-boot.jar /out/

FROM ${BUILDER_IMAGE} AS runtime
COPY Dockerfiles/jvm/ /build/
COPY --from=build /out/cityref-java-spring-boot.jar /tmp/
RUN java -Djarmode=tools -jar /tmp/cityref-java-spring-boot.jar extract --destination /app
COPY services/jvm.args /app/
# Spring's java.beans introspection needs java.desktop, and Tomcat's web application class loader
# java.instrument: build.sh otherwise leaves both out.
# No Spring AOT processing (-Dspring.aot.enabled): its bean definitions would fix the build's
# conditions, and tracing is one read at start (services/java-spring-boot/README.md, Tracing).
RUN KEEP_MODULES=java.desktop,java.instrument sh /build/build.sh /app/cityref-java-spring-boot.jar

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-java-spring-boot" \
      org.opencontainers.image.description="cityref city service: Java, Spring Boot 4 (Spring MVC, Tomcat, virtual threads), elasticsearch-java" \
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
       "-jar", "/app/cityref-java-spring-boot.jar", "healthcheck"]
ENTRYPOINT ["/opt/jre/bin/java", "@/app/jvm.args", "-XX:AOTCache=/app/cityref.aot", \
            "-jar", "/app/cityref-java-spring-boot.jar"]
