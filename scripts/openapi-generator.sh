#!/usr/bin/env bash
# Runs the pinned openapi-generator CLI (fetched from Maven Central, checksum verified).
# Usage: scripts/openapi-generator.sh <openapi-generator-cli args...>
source "$(dirname "$0")/lib.sh"
VERSION=7.25.0
JAR="$CACHE/tools/openapi-generator-cli-$VERSION.jar"
fetch "$MAVEN_CENTRAL/org/openapitools/openapi-generator-cli/$VERSION/openapi-generator-cli-$VERSION.jar" \
  "$JAR" 41ce4f6b07f196676439d710759fa1ced7a08066d06ff1bf314681470289efae
jh=$(java_home)
exec "$jh/bin/java" -jar "$JAR" "$@"
