# ovnk — the two commands a newcomer needs are `make demo` and `make test`.

SHELL     := /bin/bash
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X github.com/ovnk/ovnk/pkg/version.Version=$(VERSION)
# The schema the NB models are generated from: OVN 25.03, the oldest release we support.
NB_SCHEMA ?= ../shared/ovn/ovn-nb-7.11.0.ovsschema
# go test's own timeout, per package; the suite starts real servers on 2 cores.
TEST_TIMEOUT ?= 30m

.PHONY: all build test deps bench lint generate generate-nbdb generate-api demo clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-ovnk ./cmd/kubectl-ovnk
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ovnk-agent ./cmd/ovnk-agent

# Installs what is missing (Debian packages as root, kube-apiserver and kubectl built
# from the Go module proxy into a cache), then runs every test against real servers.
test:
	@eval "$$(scripts/deps.sh)" && \
	  echo "make test: kube binaries from $$OVNK_KUBE_BIN" && \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

deps:
	@scripts/deps.sh >/dev/null

# Every benchmark in one run, ours beside the peers' (raw OVSDB transactions, ovn-nbctl),
# then the table of figures and ratios. OVNK_BENCH_NODES / OVNK_BENCH_NETWORKS size the
# zone of the apply benchmarks.
bench:
	@eval "$$(scripts/deps.sh)" && \
	  set -o pipefail && \
	  $(GO) test -run '^$$' -bench . -benchmem -timeout $(TEST_TIMEOUT) ./... 2>&1 | $(GO) run ./test/benchreport

lint:
	@out="$$(gofmt -l cmd pkg test)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

generate: generate-nbdb generate-api

generate-nbdb:
	@test -f $(NB_SCHEMA) || { echo "NB schema $(NB_SCHEMA) not found: set NB_SCHEMA=path/to/ovn-nb.ovsschema"; exit 1; }
	find pkg/ovn/nbdb -name '*.go' ! -name gen.go -delete
	$(GO) tool modelgen -extended -p nbdb -o pkg/ovn/nbdb $(NB_SCHEMA)

generate-api:
	$(GO) generate ./pkg/api/...

demo: build
	@echo "The demo (a three-node cluster on this machine, driven by kubectl ovnk) is not built yet."
	@echo "It arrives with the agent and plugin issues. Meanwhile: bin/kubectl-ovnk version --client"
	@$(BIN)/kubectl-ovnk version --client

clean:
	rm -rf $(BIN)
