#!/bin/sh
# Starts the service on Java 25+ (Debian 12 has only JDK 17). `exec`: signals reach the JVM directly.
# Environment: PORT, ELASTICSEARCH_URL, ELASTICSEARCH_TIMEOUT_MS, LOG_LEVEL, OTEL_TRACES_EXPORTER and, with it
# set to otlp, the OpenTelemetry variables (README.md).
# JVM options: ../jvm.args, the same file the image uses.
cd "$(dirname "$0")" || exit 1
# Java 25+: $JAVA_HOME when it is one, else the system's JVM directories (../../scripts/java-home.sh).
JAVA_HOME=$(../../scripts/java-home.sh --jre) || { echo '{"level":"error","msg":"no Java 25 or newer: set JAVA_HOME"}'; exit 1; }
# Spring's documented way to run on the JVM: the extracted jar (`make build`: target/app), as the
# image runs it; the image adds the JDK's AOT cache.
exec "$JAVA_HOME/bin/java" @../jvm.args -jar target/app/cityref-java-spring-boot.jar "$@"
