# isamatch front-door targets. `make test` is what CI (.ci/run) runs.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Each recipe runs in one shell, so variables carry from line to line.
.ONESHELL:
.DEFAULT_GOAL := test

GO ?= go
# Per test binary; the e2e suites are the slow ones.
GOTEST_TIMEOUT ?= 40m
GOTEST_FLAGS ?=
PKGS ?= ./...

.PHONY: test test-node test-compat controlplane kueue vet build lint bench bench-go fuzz demo images

## controlplane: build (once) the pinned kube-apiserver, kube-scheduler and etcd; prints their directory
controlplane:
	hack/controlplane.sh

## kueue: build (once) the pinned Kueue controller manager the leaf-group suite runs (test/leafgroup); prints its directory
kueue:
	hack/kueue.sh

## test: control plane, node binaries, Kueue and metrics-server, then go vet, then unit tests and the ginkgo suites, the real-node suite included (KUBEBUILDER_ASSETS, ISAMATCH_NODE_ASSETS, ISAMATCH_KUEUE_ASSETS and ISAMATCH_METRICS_SERVER_ASSETS exported); output also in .cache/test.log, failures repeated at the end
test:
	hack/deps.sh node
	assets="$$(hack/controlplane.sh)"
	node_assets="$$(hack/controlplane.sh node)"
	kueue_assets="$$(hack/kueue.sh)"
	metrics_server_assets="$$(hack/metrics-server.sh)"
	echo "KUBEBUILDER_ASSETS=$$assets ISAMATCH_NODE_ASSETS=$$node_assets ISAMATCH_KUEUE_ASSETS=$$kueue_assets ISAMATCH_METRICS_SERVER_ASSETS=$$metrics_server_assets"
	# test/node pushes the images of `make images` (tag node-test, this
	# machine's platform): building them first keeps that compile out of the
	# test timeout.
	$(GO) run ./hack/images --repo isamatch.invalid/prebuild --tag node-test --oci-layout .cache/images --only labeler,webhook --platforms "linux/$$($(GO) env GOARCH)"
	$(GO) vet $(PKGS)
	$(GO) -C rebalance vet ./...
	mkdir -p .cache
	status=0
	KUBEBUILDER_ASSETS="$$assets" ISAMATCH_NODE_ASSETS="$$node_assets" ISAMATCH_KUEUE_ASSETS="$$kueue_assets" ISAMATCH_METRICS_SERVER_ASSETS="$$metrics_server_assets" $(GO) test -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) $(PKGS) 2>&1 | tee .cache/test.log || status=$$?
	# rebalance/ is a module of its own (descheduler's libraries): its unit tests.
	$(GO) -C rebalance test $(GOTEST_FLAGS) ./... 2>&1 | tee -a .cache/test.log || status=$$?
	if [[ $$status -ne 0 ]]; then hack/failures.sh .cache/test.log; fi
	exit $$status

## test-node: the real-node suite alone (test/node, docs/real-node.md): as root, a kubelet, containerd and kube-proxy on this machine, `kubectl apply -k` of config/; output also in .cache/test-node.log
test-node:
	hack/deps.sh node
	assets="$$(hack/controlplane.sh)"
	node_assets="$$(hack/controlplane.sh node)"
	metrics_server_assets="$$(hack/metrics-server.sh)"
	echo "KUBEBUILDER_ASSETS=$$assets ISAMATCH_NODE_ASSETS=$$node_assets ISAMATCH_METRICS_SERVER_ASSETS=$$metrics_server_assets"
	mkdir -p .cache
	KUBEBUILDER_ASSETS="$$assets" ISAMATCH_NODE_ASSETS="$$node_assets" ISAMATCH_METRICS_SERVER_ASSETS="$$metrics_server_assets" $(GO) test -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) ./test/node -ginkgo.v 2>&1 | tee .cache/test-node.log

## test-compat: the suites that exercise the Kubernetes features isamatch needs (test/labeler, test/webhook) against an older control plane, KUBE_VERSION (default the oldest release tested, README "Compatibility"); not part of `make test`: its build is a second 10-minute compile
test-compat: KUBE_VERSION ?= v1.30.14
test-compat:
	assets="$$(KUBE_VERSION=$(KUBE_VERSION) hack/controlplane.sh)"
	# 1.30 has recursiveReadOnly as alpha, off by default: the statement
	# supports 1.30 with the gate on, so the suites run with it on.
	gates=""
	case "$(KUBE_VERSION)" in v1.30.*) gates=RecursiveReadOnlyMounts=true ;; esac
	echo "KUBEBUILDER_ASSETS=$$assets KUBE_VERSION=$(KUBE_VERSION) ISAMATCH_APISERVER_FEATURE_GATES=$$gates"
	mkdir -p .cache
	KUBEBUILDER_ASSETS="$$assets" ISAMATCH_APISERVER_FEATURE_GATES="$$gates" $(GO) test -count=1 -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) ./test/labeler ./test/webhook 2>&1 | tee .cache/test-compat.log

vet:
	$(GO) vet $(PKGS)

## build: every command under cmd/ into bin/
build:
	mkdir -p bin
	$(GO) build -o bin/ ./cmd/...

## lint: gofmt must list nothing, go vet must pass
lint:
	unformatted="$$(find . -name '*.go' -not -path './.cache/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
	if [[ -n "$$unformatted" ]]; then echo "gofmt -l lists files to format:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: the side-by-side cluster benchmark (cmd/bench, docs/benchmarks.md): one table, medians of BENCH_FLAGS' --runs
BENCH_FLAGS ?=
bench:
	hack/deps.sh
	assets="$$(hack/controlplane.sh)"
	export KUBEBUILDER_ASSETS="$$assets"
	mkdir -p bin
	$(GO) build -o bin/bench ./cmd/bench
	bin/bench $(BENCH_FLAGS)

## fuzz: each fuzz target of pkg/imageisa (tar index, ELF reader, RISC-V attributes, GNU properties) for FUZZTIME seconds, one at a time
FUZZTIME ?= 10
fuzz:
	hack/fuzz.sh $(FUZZTIME)

## bench-go: every Go Benchmark* function (no tests); BENCH_GO_FLAGS=-count=10 for benchstat
BENCH_GO_FLAGS ?=
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_GO_FLAGS) $(PKGS)

## demo: the paper's experiments, then the rebalancing and leaf-group scenes (skipped without kube-controller-manager or Kueue), on embedded control planes (cmd/demo)
DEMO_FLAGS ?=
demo:
	hack/deps.sh
	assets="$$(hack/controlplane.sh)"
	export KUBEBUILDER_ASSETS="$$assets"
	# The rebalancing scene needs kube-controller-manager, the leaf-group
	# scene Kueue; without them the demo skips the scene and says why.
	if node_assets="$$(hack/controlplane.sh node)"; then export ISAMATCH_NODE_ASSETS="$$node_assets"; fi
	if kueue_assets="$$(hack/kueue.sh)"; then export ISAMATCH_KUEUE_ASSETS="$$kueue_assets"; fi
	mkdir -p bin
	$(GO) build -o bin/demo ./cmd/demo
	bin/demo $(DEMO_FLAGS)

## images: multi-arch labeler, webhook and rebalancer images without a Docker daemon (hack/images, config/README.md)
##   make images REPO=registry.example.com/isamatch TAG=v0.1.0
##   make images REPO=... TAG=... IMAGES_FLAGS="--oci-layout _output/oci"   # no push
REPO ?=
TAG ?= dev
PLATFORMS ?= linux/amd64,linux/arm64,linux/riscv64
IMAGES_FLAGS ?= --push
images:
	$(GO) run ./hack/images --repo "$(REPO)" --tag "$(TAG)" --platforms "$(PLATFORMS)" $(IMAGES_FLAGS)
