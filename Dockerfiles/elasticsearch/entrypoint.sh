#!/bin/bash
# Entry point of Dockerfiles/elasticsearch.Dockerfile: starts Elasticsearch in the foreground with
# every environment variable named like a setting (lower case with a dot: `http.port=9201`) passed
# as `-E name=value`, the convention of the official image, then the container's arguments.
set -euo pipefail
args=()
while IFS= read -r -d '' entry; do
  name=${entry%%=*}
  if [[ $name =~ ^[a-z0-9_]+(\.[a-z0-9_]+)+$ ]]; then args+=(-E "$entry"); fi
done < <(env -0)
exec /usr/share/elasticsearch/bin/elasticsearch "${args[@]}" "$@"
