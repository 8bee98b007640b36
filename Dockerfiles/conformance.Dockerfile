# The conformance suite as an image: the `cityref-conformance` distribution (pyproject.toml: the
# suite, the spec, the golden cases and the fixture) in a virtual environment, its dependencies at
# the versions of conformance/requirements.txt. Also compose.yaml's fixture loader.
#
#   docker build -f Dockerfiles/conformance.Dockerfile -t cityref/conformance .
#   docker run --rm --network host cityref/conformance load-fixture --es-url http://127.0.0.1:9200
#   docker run --rm --network host cityref/conformance --base-url http://127.0.0.1:8080 \
#     --es-url http://127.0.0.1:9200       # summary on stdout; JUnit XML in /work/out/conformance
#   (add -v "$PWD/out:/work/out" to keep the JUnit XML and logs)
#
# In an image the suite reaches a running service (--base-url: the HTTP groups); the lifecycle and
# backend groups start the service themselves (--command), which needs it inside the same
# container or the package installed beside it (conformance/README.md).
# BUILDER_IMAGE and BASE_IMAGE default to the official Python image; `make images` passes a local
# equivalent (Debian's Python 3.11, Dockerfiles/README.md).
ARG BUILDER_IMAGE=docker.io/library/python:3.11-slim-bookworm
ARG BASE_IMAGE=docker.io/library/python:3.11-slim-bookworm

FROM ${BUILDER_IMAGE} AS build
COPY pyproject.toml LICENSE /src/
COPY conformance/ /src/conformance/
COPY cityref_tools/ /src/cityref_tools/
COPY spec/ /src/spec/
COPY data/fixture/ /src/data/fixture/
COPY data/dataset.py /src/data/dataset.py
RUN python3 -m venv /opt/cityref \
 && /opt/cityref/bin/pip install --no-cache-dir --disable-pip-version-check \
      -c /src/conformance/requirements.txt /src \
 && mkdir -p /work/out

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-conformance" \
      org.opencontainers.image.description="cityref conformance suite: black-box checks of the city service's OpenAPI contract" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /opt/cityref /opt/cityref
# /work/out, the suite's default --out, belongs to the user the suite runs as: no volume needed
COPY --from=build --chown=65532:65532 /work /work
ENV PATH=/opt/cityref/bin:/usr/local/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["cityref-conformance"]
CMD ["--help"]
