# Elasticsearch for compose.yaml and `cityref-conformance elasticsearch`, built the way the other
# images are: the distribution this repository tests against (Maven Central's integ-test zip, the
# same file and checksum as scripts/es.sh, which checks that they agree) on a Temurin 25 runtime.
# Single node, security off, HTTP on 9200: a test backend, not a production cluster.
#
# It takes settings the way the official image does, so either can serve compose.yaml
# (ELASTICSEARCH_IMAGE) and the suite: every environment variable named like a setting
# (`discovery.type=single-node`, `http.port=9201`) becomes `-E name=value`; ES_JAVA_OPTS sets the heap.
#
#   docker build -f Dockerfiles/elasticsearch.Dockerfile -t cityref/elasticsearch:8.19.21 .
#
# BUILDER_IMAGE (fetch and unpack) and BASE_IMAGE (the runtime: a JRE 25 with bash, which the
# distribution's launcher scripts need) default to the official Temurin images; `make images`
# passes its local JDK image for both (Dockerfiles/README.md).
ARG BUILDER_IMAGE=docker.io/library/eclipse-temurin:25-jdk
ARG BASE_IMAGE=docker.io/library/eclipse-temurin:25-jre

FROM ${BUILDER_IMAGE} AS dist
ARG ES_VERSION=8.19.21
ARG ES_SHA256=215d5f3dbf0609a149f6218a9e47b6ae2df34ebbff3c5754e35f15a5e5393c8a
ADD https://repo.maven.apache.org/maven2/org/elasticsearch/distribution/integ-test-zip/elasticsearch/${ES_VERSION}/elasticsearch-${ES_VERSION}.zip /tmp/es.zip
RUN echo "${ES_SHA256}  /tmp/es.zip" | sha256sum -c - \
 && { command -v unzip >/dev/null || { apt-get update && apt-get install -y --no-install-recommends unzip; }; } \
 && unzip -q /tmp/es.zip -d /tmp && mv /tmp/elasticsearch-${ES_VERSION} /usr/share/elasticsearch \
 && mkdir -p /usr/share/elasticsearch/data /usr/share/elasticsearch/logs
COPY Dockerfiles/elasticsearch/elasticsearch.yml /usr/share/elasticsearch/config/elasticsearch.yml
COPY --chmod=0555 Dockerfiles/elasticsearch/entrypoint.sh /usr/local/bin/cityref-elasticsearch

FROM ${BASE_IMAGE}
ARG ES_VERSION=8.19.21
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="cityref-elasticsearch" \
      org.opencontainers.image.description="Elasticsearch ${ES_VERSION} (integ-test distribution, single node, no security) for cityref" \
      org.opencontainers.image.source="https://github.com/cityref/cityref" \
      org.opencontainers.image.licenses="SSPL-1.0 OR Elastic-2.0 OR AGPL-3.0-only" \
      org.opencontainers.image.version="${ES_VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
# uid 1000, gid 0 and group-writable data, as in the official image (Elasticsearch refuses root).
COPY --from=dist --chown=1000:0 /usr/share/elasticsearch /usr/share/elasticsearch
COPY --from=dist /usr/local/bin/cityref-elasticsearch /usr/local/bin/cityref-elasticsearch
ENV ES_JAVA_HOME=/opt/java/openjdk HOME=/usr/share/elasticsearch
WORKDIR /usr/share/elasticsearch
USER 1000:0
EXPOSE 9200 9300
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/cityref-elasticsearch"]
