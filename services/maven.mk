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

.PHONY: build test generate check-generated

test:  ## formatting and lint (spotless: palantir-java-format or ktlint), unit tests, generated-code drift
	$(MVN) spotless:check test
	@$(MAKE) --no-print-directory check-generated

generate:  ## rewrite generated/{src,openapi.json} from the spec
	@$(GENERATED) generate generated src openapi.json -- $(GENERATOR_ARGS)

check-generated:  ## regenerate into a temp dir and fail on any difference from generated/
	@$(GENERATED) check generated src openapi.json -- $(GENERATOR_ARGS)
