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

.PHONY: all build test deps bench lint generate generate-nbdb generate-ovsdb generate-api docs dist demo demo-down clean

all: build

# The plugin, the agent and its CNI plugin, the sandbox, and the programs of the
# sandbox's images (pause, the test application); static, as they go into images
# with no C library.
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/kubectl-ovnk ./cmd/ovnk-agent ./cmd/ovnk-cni ./cmd/ovnk-sandbox ./cmd/ovnk-pause ./cmd/ovnk-testapp

# Installs what is missing (Debian packages as root, kube-apiserver and kubectl built
# from the Go module proxy into a cache), then runs every test against real servers.
test:
	@env="$$(scripts/deps.sh)" && eval "$$env" && \
	  echo "make test: kube binaries from $$OVNK_KUBE_BIN" && \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

deps:
	@scripts/deps.sh >/dev/null

# Every benchmark in one run, ours beside the peers' (raw OVSDB transactions, ovn-nbctl),
# then the table of figures and ratios. OVNK_BENCH_NODES / OVNK_BENCH_NETWORKS size the
# zone of the apply benchmarks.
bench:
	@env="$$(scripts/deps.sh)" && eval "$$env" && \
	  set -o pipefail && \
	  $(GO) test -run '^$$' -bench . -benchmem -timeout $(TEST_TIMEOUT) ./... 2>&1 | $(GO) run ./test/benchreport

lint:
	@out="$$(gofmt -l cmd pkg test)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

generate: generate-nbdb generate-ovsdb generate-api

generate-nbdb:
	@test -f $(NB_SCHEMA) || { echo "NB schema $(NB_SCHEMA) not found: set NB_SCHEMA=path/to/ovn-nb.ovsschema"; exit 1; }
	find pkg/ovn/nbdb -name '*.go' ! -name gen.go -delete
	$(GO) tool modelgen -extended -p nbdb -o pkg/ovn/nbdb $(NB_SCHEMA)

# The Southbound and Open_vSwitch models, from the schemas of the OVN root that
# scripts/ovn-root.sh provisions (OVN 25.03, OVS 3.5).
generate-ovsdb:
	@env="$$(scripts/deps.sh)" && eval "$$env" && \
	  root="$${OVNK_OVN_ROOT:?scripts/deps.sh did not name the OVN root}" && \
	  find pkg/ovn/sbdb pkg/host/vswitch/vswitchdb -name '*.go' ! -name gen.go -delete && \
	  $(GO) tool modelgen -extended -p sbdb -o pkg/ovn/sbdb "$$root/usr/share/ovn/ovn-sb.ovsschema" && \
	  $(GO) tool modelgen -extended -p vswitchdb -o pkg/host/vswitch/vswitchdb "$$root/usr/share/openvswitch/vswitch.ovsschema"

generate-api:
	$(GO) generate ./pkg/api/...

# The command reference in docs/reference, from the commands' own help.
docs:
	$(GO) test ./pkg/cli -run TestReferenceIsCurrent -update

# The plugin's release archives for krew (deploy/krew/ovnk.yaml), in dist/.
dist:
	scripts/dist.sh $(VERSION) dist

# The local sandbox of `make demo` (docs/demo.md): its directory, under the checkout.
SANDBOX_DIR ?= .sandbox

# Installs what is missing (as `make test` does), builds, starts a three-node sandbox on
# this machine as root (etcd, kube-apiserver, and per node a network namespace with its
# OVS, OVN zone and ovnk-agent) or reuses the running one, and drives it with kubectl
# ovnk and real packets. The sandbox keeps running afterwards.
demo: build
	@env="$$(scripts/deps.sh)" && eval "$$env" && SANDBOX_DIR='$(SANDBOX_DIR)' scripts/demo.sh

# Stops the sandbox's processes and removes its directory.
demo-down:
	@test -x $(BIN)/ovnk-sandbox || $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ovnk-sandbox ./cmd/ovnk-sandbox
	@$(BIN)/ovnk-sandbox down --dir '$(SANDBOX_DIR)'

clean:
	rm -rf $(BIN) dist
