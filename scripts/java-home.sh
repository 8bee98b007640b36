#!/bin/sh
# Prints the home of a JDK 25 or newer, the one the JVM services and tools need:
#   1. $JAVA_HOME, when it holds one (SDKMAN, actions/setup-java, a macOS /usr/libexec/java_home);
#   2. the newest one in the system's JVM directories (/usr/lib/jvm on Debian and Ubuntu,
#      /Library/Java/JavaVirtualMachines on macOS; CITYREF_JVM_DIRS, a space-separated list, searches
#      those directories instead, and none when empty: the tests hide the machine's JDKs with it);
#   3. the one whose `java` is on PATH.
# When there is none: one line on stderr, `cityref: <what is missing>: <the fix>` (what JAVA_HOME holds
# instead, if it is set), and exit 2. `--jre`: a runtime is enough (no javac).
# POSIX sh: run.sh scripts use it too.
need=javac
[ "${1:-}" = "--jre" ] && need=java

major() {  # the feature version of the JDK at $1 (its `release` file, else `java -version`)
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null)
  [ -n "$v" ] || v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
  echo "${v:-0}"
}

usable() { [ -x "$1/bin/java" ] && [ -x "$1/bin/$need" ] && [ "$(major "$1")" -ge 25 ]; }

if [ -n "${JAVA_HOME:-}" ] && usable "$JAVA_HOME"; then echo "$JAVA_HOME"; exit 0; fi
best=
for dir in ${CITYREF_JVM_DIRS-/usr/lib/jvm /Library/Java/JavaVirtualMachines}; do
  for jh in "$dir"/* "$dir"/*/Contents/Home; do
    { [ -d "$jh" ] && usable "$jh"; } || continue
    if [ -z "$best" ] || [ "$(major "$jh")" -gt "$(major "$best")" ]; then best=$jh; fi
  done
done
if [ -z "$best" ] && command -v java >/dev/null 2>&1; then
  jh=$(cd "$(dirname "$(readlink -f "$(command -v java)")")/.." && pwd)
  usable "$jh" && best=$jh
fi
[ -n "$best" ] && { echo "$best"; exit 0; }
what="no JDK 25 or newer"
if [ -n "${JAVA_HOME:-}" ]; then
  v=$(major "$JAVA_HOME")
  if [ "$v" = 0 ]; then held="no Java"; elif [ "$v" -lt 25 ]; then held="Java $v"; else held="Java $v without $need"; fi
  what="JAVA_HOME ($JAVA_HOME) holds $held, and there is no JDK 25 or newer elsewhere"
fi
echo "cityref: $what: set JAVA_HOME to a JDK 25 or newer (e.g. Temurin 25: https://adoptium.net, sdk install java 25-tem, or actions/setup-java with java-version 25)" >&2
exit 2
