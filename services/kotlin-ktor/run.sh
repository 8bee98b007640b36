#!/bin/sh
# Starts the fat jar on Temurin 25 (Java 21+ needed; Debian 12 has only JDK 17). `exec`: signals reach the JVM directly.
# Environment: PORT, ELASTICSEARCH_URL, ELASTICSEARCH_TIMEOUT_MS, LOG_LEVEL (README.md).
# JVM options: ../jvm.args, the same file the image uses.
cd "$(dirname "$0")" || exit 1
if [ -z "$JAVA_HOME" ] || [ ! -x "$JAVA_HOME/bin/java" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"25'; then
  JAVA_HOME=$(ls -d /usr/lib/jvm/*temurin*25* 2>/dev/null | sort -V | tail -1)
fi
[ -x "$JAVA_HOME/bin/java" ] || { echo '{"level":"error","msg":"Temurin 25 not found in /usr/lib/jvm"}'; exit 1; }
exec "$JAVA_HOME/bin/java" @../jvm.args -jar target/cityref-kotlin-ktor.jar "$@"
