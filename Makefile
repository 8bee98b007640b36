# cityref — one entry point. Every target is a thin wrapper over scripts/.
.PHONY: help doctor up down test loaded-check package-test protocol-matrix spec lint generate compose kubernetes readme-table images test-images startup-budget es es-stop es-reset traces traces-stop data-bench bench bench-full bench-publish bench-observability bench-resilience
.DEFAULT_GOAL := help

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

doctor:  ## check every requirement, with a one-line fix for each one missing (SERVICES=a,b: only theirs)
	@scripts/doctor.sh

up:  ## Elasticsearch + fixture + every implemented service (SERVICES=a,b: only those), printing URLs and a sample request
	@scripts/up.sh

down:  ## stop the services and Elasticsearch
	@scripts/down.sh

bench:  ## the benchmark, quick profile: sets everything up, writes out/bench/latest/report.html (ARGS=… for options)
	@scripts/bench.sh --profile quick $(ARGS)

bench-full:  ## the benchmark, the original study's full profile (connections 2…2048, 3 interleaved repeats)
	@scripts/bench.sh --profile full $(ARGS)

bench-publish:  ## the published ranking (within an hour): 3 starts of every image and an A/A twin, interleaved rounds at 64 connections and 1000 req/s, intervals and ties, into docs/results/<date>-<commit>/ and README.md's results
	@scripts/bench.sh publish $(ARGS)

bench-observability:  ## what observability costs per framework: every service bare beside its variants (tracing at 100 % and 10 %, the Java agent, per-request logs), 2 starts each, interleaved rounds, intervals; into docs/results/observability.md (about 2 hours, as root)
	@scripts/bench.sh observability $(ARGS)

bench-resilience:  ## resilience per target, bare and image: upstream outage (64 and 2048 connections), slow upstream, slow and hostile clients, soak; quick profile about 65 minutes (ARGS=… for options)
	@scripts/bench.sh resilience $(ARGS)

test:  ## what CI runs: linters, every service built and unit-tested once and put through full conformance (SERVICES=a,b: only those), bench tests + smoke runs, images from those builds, the READMEs' commands verbatim; a stage table in out/results/stages.json
	@scripts/test.sh

loaded-check:  ## the in-flight check RUNS times (10) against SERVICE's bare build beside one CPU-bound loop per CPU, tracing on (docs/development.md)
	@scripts/loaded-check.sh $(SERVICE) $(or $(RUNS),10)

package-test:  ## the installable suite end to end: wheel, fresh venv, run from outside the tree against go-kit
	@$(MAKE) -C services/go-kit build && scripts/es.sh up && scripts/package-test.sh

protocol-matrix:  ## build every service, run the differential group against all of them, publish docs/protocol-matrix.md
	@for d in $(dir $(wildcard services/*/cityref.yaml)); do $(MAKE) -C $$d build || exit 1; done
	@scripts/es.sh up && scripts/python.sh -m conformance differential --service all --grammar \
	  --es-url "$$(scripts/es.sh url)" --publish docs/protocol-matrix.md

images:  ## build every image from source (multi-stage; podman, no daemon): the services, elasticsearch, conformance
	@scripts/images.sh build

test-images:  ## every image under --cpus 1.5 --memory 512m (startup and size against the targets, idle memory, full conformance, JVM startup budget), then compose.yaml end to end
	@scripts/images.sh test

startup-budget:  ## each JVM image's startup per phase, with and without its AOT cache, under the benchmark's limits (Dockerfiles/README.md)
	@scripts/images.sh budget

compose:  ## regenerate compose.yaml from the descriptors and Dockerfiles (make test checks it; make test-images runs it)
	@scripts/python.sh scripts/compose.py

kubernetes:  ## regenerate deploy/kubernetes/ from the descriptors (make test checks and validates it)
	@scripts/python.sh scripts/kubernetes.py

readme-table:  ## regenerate README.md's services table and results (services/*/cityref.yaml, docs/results/latest), docs/development.md's stage tables (docs/results/ci/) and services/README.md's source lines; make test checks them
	@scripts/python.sh scripts/readme_table.py

spec:  ## regenerate spec/openapi.json from spec/openapi.yaml
	@scripts/python.sh scripts/spec_json.py

lint:  ## lint the spec only
	@scripts/lint-spec.sh

generate:  ## regenerate every service's models from the spec
	@for d in $(dir $(wildcard services/*/cityref.yaml)); do $(MAKE) -C $$d generate || exit 1; done

es:  ## start Elasticsearch and load the fixture
	@scripts/es.sh up

es-stop:  ## stop Elasticsearch
	@scripts/es.sh stop

es-reset:  ## stop Elasticsearch and delete its data
	@scripts/es.sh reset

traces:  ## start the trace backend (Jaeger, built from tools/jaeger/go.mod): OTLP on 127.0.0.1:4318, traces UI and query API on http://127.0.0.1:16686
	@scripts/traces.sh up

traces-stop:  ## stop the trace backend
	@scripts/traces.sh stop

data-bench:  ## load the benchmark dataset (CITIES=100000 REGIONS=1000 SEED=2020)
	@scripts/es.sh start
	@scripts/python.sh data/load.py --es-url $$(scripts/es.sh url) bench \
	  --cities $(or $(CITIES),100000) --regions $(or $(REGIONS),1000) --seed $(or $(SEED),2020)
