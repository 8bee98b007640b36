# Included by the four JVM services' Makefiles (run in the service's directory): the JDK, the Maven
# wrapper and the targets they share. Each Makefile sets GENERATOR_ARGS and its own `build`.

# A JDK 25+: $JAVA_HOME first, then the system's JVM directories (scripts/java-home.sh); Debian 12's
# own JDK 17 is not used.
export JAVA_HOME := $(or $(shell ../../scripts/java-home.sh),$(error no JDK 25 or newer: set JAVA_HOME to one))
# The Maven wrapper (services/mvnw): Maven 3.9.16 from Maven Central, checksum-verified; batch mode and
# no Kotlin compile daemon (it would idle for hours at hundreds of MB after each build) from
# ../.mvn/maven.config.
MVN := ../mvnw -q
GENERATED := ../../scripts/generated.sh

.PHONY: build test ci generate check-generated

# The artifact (target/cityref-<service>.jar, and what the service's PACKAGED adds) is a file target
# over every source it is built from, so that `make build` after `make ci` (conformance's --service,
# make up, the benchmark) does not compile the service a second time.
SERVICE := $(notdir $(CURDIR))
JAR := target/cityref-$(SERVICE).jar
SHARED := ../$(firstword $(subst -, ,$(SERVICE)))-shared
SOURCES := pom.xml ../.mvn/maven.config ../jvm.args $(shell find src generated $(SHARED)/src -type f)

build: $(JAR)  ## the artifact, without the tests (nothing to do when it is newer than every source)

$(JAR): $(SOURCES)
	$(MVN) package -DskipTests
	$(PACKAGED)

test:  ## formatting and lint (spotless: palantir-java-format or ktlint), unit tests, generated-code drift
	$(MVN) spotless:check test
	@$(MAKE) --no-print-directory check-generated

generate:  ## rewrite generated/{src,openapi.json} from the spec
	@$(GENERATED) generate generated src openapi.json -- $(GENERATOR_ARGS)

# make test's unit-test stage: the artifact, formatting, lint and unit tests in one Maven run (the
# service compiled once), then the generated-code drift.
ci:  ## formatting and lint, unit tests and the artifact, compiled once; generated-code drift
	$(MVN) spotless:check package
	$(PACKAGED)
	@$(MAKE) --no-print-directory check-generated

check-generated:  ## regenerate into a temp dir and fail on any difference from generated/
	@$(GENERATED) check generated src openapi.json -- $(GENERATOR_ARGS)
