#!/bin/sh
# Build stage of the JVM images (Dockerfiles/<service>.Dockerfile of every Java and Kotlin service),
# run in a JDK 25 image with the service in /app:
#   build.sh <jar> [java options the service runs with, besides @/app/jvm.args]
# KEEP_MODULES (environment): modules of the list below that this service does use.
# ADD_MODULES (environment): modules to add that jdeps folds into a left-out one (see below).
# 1. /opt/jre: a jlink'd runtime with only the JDK modules jdeps finds in the jar (and /app/libs or
#    /app/lib, the libraries beside it).
# 2. Fixed mtimes (0) on /opt/jre and /app: the AOT cache records the jars' mtimes and the image
#    layers are written with the same fixed timestamp (podman build --timestamp 0; Docker keeps 0).
# 3. The AOT training run (Train.java) writes /app/cityref.aot.
set -eu
jar=$1; shift
libs=$(find /app/libs /app/lib -name '*.jar' 2>/dev/null | sort || true)
# shellcheck disable=SC2086 # the jar list is split on purpose
found=$(jdeps --ignore-missing-deps --multi-release 25 --print-module-deps "$jar" $libs)
# Modules jdeps finds only in library code that cityref never runs, left out (the images pass the
# full conformance suite without them; Dockerfiles/README.md, "Before and after"):
#   java.desktop     java.beans: Jackson's optional @ConstructorProperties/@Transient support,
#                    typesafe-config's bean factory, Micrometer's logging binder
#   java.sql         Jackson's optional java.sql types, the ES client's ES|QL JDBC helper,
#                    Micrometer's database binders
#   java.instrument  kotlinx-coroutines' debug agent
# (jdk.management stays: Helidon's startup calls java.lang.management.ManagementFactory.) A service
# that needs one of them names it in KEEP_MODULES (java-spring-boot: java.desktop for Spring's
# java.beans introspection, java.instrument for Tomcat's web application class loader).
unused=$(echo java.desktop java.sql java.instrument | tr ' ' '\n' | grep -vxF "$(echo "${KEEP_MODULES:-}" | tr ' ,' '\n\n')" | paste -sd' ' -)
modules=$(echo "$found" | tr , '\n' | grep -vxF "$(echo "$unused" | tr ' ' '\n')" | paste -sd, -)
# ADD_MODULES (environment): modules a service needs that jdeps leaves out of its list because a left-out
# module above requires them transitively (java.xml, which jdeps folds into java.desktop: java-helidon's
# Jackson 3 databind links it at startup, and the Kotlin services' logback parses its logback.xml with it).
modules="$modules${ADD_MODULES:+,$ADD_MODULES}"
echo "jlink modules: $modules (jdeps found: $found)"
jlink --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=zip-6 \
  --output /opt/jre
find /opt/jre /app -exec touch -h -d @0 {} +
java "$(dirname "$0")/Train.java" /app/cityref.aot /opt/jre/bin/java @/app/jvm.args "$@" -jar "$jar"
