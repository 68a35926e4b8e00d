# isamatch front-door targets. `make test` is what CI (.ci/run) runs.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Each recipe runs in one shell, so variables carry from line to line.
.ONESHELL:
.DEFAULT_GOAL := test

GO ?= go
# Every build, vet and test runs in its own module (go.work, for editors and
# linters, would give the root module rebalance/'s replacements).
export GOWORK := off
# Without -trimpath the Go build cache keys every package of this tree by
# its directory, so a fresh clone elsewhere compiles, vets and links all of
# it again although nothing changed; with it, a clone reuses the cache (the
# release builds and hack/*.sh use -trimpath already).
# -dwarf=false: the compiler writes no debug information, which the
# shipped binaries strip anyway (-ldflags '-s -w') and the tests never read
# (stack traces and file:line come from the symbol table, not DWARF). It
# cuts a cold build's compile time by about a fifth (k8s.io/client-go,
# 575 packages: 107-114 s against 131-140 s).
export GOFLAGS := $(strip $(GOFLAGS) -trimpath -gcflags=all=-dwarf=false)
# Static, as the shipped images and the control plane (hack/controlplane.sh,
# hack/metrics-server.sh) are built: with one cgo setting and the modules at
# the same versions (hack/alignmods), a package compiled for the control
# plane is the same package for the tests, the images and the rebalancer,
# and compiles once. Nothing here needs cgo (no -race in make test).
export CGO_ENABLED := 0
# Per test binary; the e2e suites are the slow ones.
GOTEST_TIMEOUT ?= 40m
GOTEST_FLAGS ?=
# The longest suites first: go test starts the packages in the order named
# (./... repeats none). `make test` runs the real-node suite, the long
# pole, in a go test of its own and the others beside it (below).
PKGS ?= ./test/node ./test/e2e ./test/rebalance ./test/webhook ./...
NODE_PKG := github.com/isamatch/isamatch/test/node

.PHONY: test test-node test-compat controlplane kueue vet build lint bench bench-scale bench-go fuzz demo images release docs

## controlplane: build (once) the pinned kube-apiserver, kube-scheduler and etcd; prints their directory (hack/controlplane.sh node [BINARY...]: the node set, or some of it)
controlplane:
	hack/controlplane.sh

## kueue: build (once) the pinned Kueue controller manager the leaf-group suite runs (test/leafgroup); prints its directory
kueue:
	hack/kueue.sh

## test: control plane, node binaries, Kueue and metrics-server, then unit tests and the ginkgo suites, the real-node suite included (KUBEBUILDER_ASSETS, ISAMATCH_NODE_ASSETS, ISAMATCH_KUEUE_ASSETS and ISAMATCH_METRICS_SERVER_ASSETS exported); output also in .cache/test.log, failures repeated at the end
# go vet is make lint's (CI runs both): go test skips its own vet subset,
# whose analysis of every imported package costs a new machine minutes.
test:
	hack/deps.sh node
	mkdir -p .cache
	assets="$$(hack/controlplane.sh)"
	# Kueue (its own Kubernetes release) builds beside the node binaries and
	# metrics-server, after the control plane: the packages of the modules
	# outside its release are the control plane's (hack/alignmods), compiled
	# by then, not twice at once.
	hack/kueue.sh >.cache/kueue.dir & kueue_pid=$$!
	node_assets="$$(hack/controlplane.sh node)"
	metrics_server_assets="$$(hack/metrics-server.sh)"
	wait $$kueue_pid
	kueue_assets="$$(tail -n1 .cache/kueue.dir)"
	echo "KUBEBUILDER_ASSETS=$$assets ISAMATCH_NODE_ASSETS=$$node_assets ISAMATCH_KUEUE_ASSETS=$$kueue_assets ISAMATCH_METRICS_SERVER_ASSETS=$$metrics_server_assets"
	# test/node makes a release (`make release` for this machine's platform:
	# hack/images, hack/plugin, then hack/release): building them first
	# keeps those compiles out of the test timeout. `go run` caches the
	# executables it links, so the suite's own `go run` starts at once.
	echo "==> the labeler and webhook images for linux/$$($(GO) env GOARCH) and hack/release, then the tests (the first run compiles every module: about 10 minutes on 2 idle cores)"
	$(GO) run ./hack/images --repo isamatch.invalid/prebuild --tag v0.0.0-prebuild --oci-layout .cache/images --only labeler,webhook --platforms "linux/$$($(GO) env GOARCH)"
	$(GO) run ./hack/plugin --version v0.0.0-prebuild --out .cache/plugin --platforms "linux/$$($(GO) env GOARCH)"
	$(GO) -C hack/release run . --help >/dev/null 2>&1 || $(GO) -C hack/release build -o /dev/null .
	# test/rebalance and test/node build the rebalancer (descheduler's
	# libraries, minutes of compiling on a new machine) inside their
	# timeouts: compiled here first (more than one package: compiled, not
	# linked), their builds find it in Go's cache.
	echo "==> the rebalancer module (rebalance/)"
	$(GO) -C rebalance build ./...
	status=0
	export KUBEBUILDER_ASSETS="$$assets" ISAMATCH_NODE_ASSETS="$$node_assets" ISAMATCH_KUEUE_ASSETS="$$kueue_assets" ISAMATCH_METRICS_SERVER_ASSETS="$$metrics_server_assets"
	# The real-node suite, the long pole, waits on its cluster more than it
	# computes. It runs (as root, which it needs) in a go test of its own
	# at the highest CPU priority (nice -20), so its cluster has a core
	# whenever it asks, and all else, at the usual priority beside it,
	# fills what it leaves idle; nothing here runs below other work on the
	# machine. Its output, and that of the modules of their own, follow
	# the other suites' in .cache/test.log: rebalance/
	# (descheduler's libraries): its unit tests; charts/ (Helm's
	# libraries): the chart rendered beside config/, helm lint, the schema;
	# hack/release (Helm, SPDX): make release into a real registry.
	# -count=1: the suites build the binaries they run (the webhook, the
	# labeler, the rebalancer) at run time, which Go's test cache does not
	# see; a cached pass would hide a change to them.
	pkgs="$$($(GO) list $(PKGS))"
	node_pkgs="$$(grep -Fx '$(NODE_PKG)' <<<"$$pkgs" || true)"
	other_pkgs="$$(grep -Fvx '$(NODE_PKG)' <<<"$$pkgs" || true)"
	: >.cache/test-node-suite.log; node_pid=""
	if [[ -n $$node_pkgs ]]; then
	  node_nice=(); if [[ $$(id -u) -eq 0 ]]; then node_nice=(nice -n -20); fi
	  "$${node_nice[@]}" $(GO) test -count=1 -vet=off -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) $$node_pkgs >.cache/test-node-suite.log 2>&1 & node_pid=$$!
	fi
	( mstatus=0
	  for m in rebalance charts hack/release; do $(GO) -C $$m test -count=1 -vet=off $(GOTEST_FLAGS) ./... || mstatus=1; done
	  exit $$mstatus ) >.cache/test-modules.log 2>&1 & modules_pid=$$!
	if [[ -n $$other_pkgs ]]; then
	  $(GO) test -count=1 -vet=off -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) $$other_pkgs 2>&1 | tee .cache/test.log || status=$$?
	else
	  : >.cache/test.log
	fi
	if [[ -n $$node_pid ]]; then
	  echo "==> waiting for the real-node suite (test/node)"
	  wait $$node_pid || status=$$?
	fi
	tee -a .cache/test.log <.cache/test-node-suite.log
	wait $$modules_pid || status=$$?
	tee -a .cache/test.log <.cache/test-modules.log
	if [[ $$status -ne 0 ]]; then hack/failures.sh .cache/test.log; fi
	exit $$status

## test-node: the real-node suite alone (test/node, docs/real-node.md): as root, a kubelet, containerd and kube-proxy on this machine, `kubectl apply -k` of config/; output also in .cache/test-node.log
test-node:
	hack/deps.sh node
	assets="$$(hack/controlplane.sh)"
	node_assets="$$(hack/controlplane.sh node)"
	metrics_server_assets="$$(hack/metrics-server.sh)"
	# The suite makes a release with hack/plugin and hack/release: compiled
	# here, outside the test timeout.
	$(GO) run ./hack/plugin --version v0.0.0-prebuild --out .cache/plugin --platforms "linux/$$($(GO) env GOARCH)"
	$(GO) -C hack/release run . --help >/dev/null 2>&1 || $(GO) -C hack/release build -o /dev/null .
	# ... and builds the rebalancer (see test).
	$(GO) -C rebalance build ./...
	echo "KUBEBUILDER_ASSETS=$$assets ISAMATCH_NODE_ASSETS=$$node_assets ISAMATCH_METRICS_SERVER_ASSETS=$$metrics_server_assets"
	mkdir -p .cache
	KUBEBUILDER_ASSETS="$$assets" ISAMATCH_NODE_ASSETS="$$node_assets" ISAMATCH_METRICS_SERVER_ASSETS="$$metrics_server_assets" $(GO) test -count=1 -v -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) ./test/node -ginkgo.v 2>&1 | tee .cache/test-node.log

## test-compat: the suites that exercise the Kubernetes features isamatch needs (test/labeler, test/webhook) against an older control plane, KUBE_VERSION (default the oldest release tested, docs/compatibility.md); not part of `make test`: its build is a second 10-minute compile
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

## docs: regenerate docs/reference/ from the code (keys, metrics, each binary's flags); the same tests without -update fail when it drifts
REFERENCE_PKGS = ./internal/docgen ./cmd/webhook ./cmd/labeler ./cmd/kubectl-isa
docs:
	$(GO) test -count=1 -run 'TestReference' $(REFERENCE_PKGS) -args -update
	cd rebalance && $(GO) test -count=1 -run 'TestReference' ./cmd/rebalancer -args -update

## build: every command under cmd/ into bin/
build:
	mkdir -p bin
	$(GO) build -o bin/ ./cmd/...

## lint: gofmt must list nothing, go vet must pass (the project, rebalance/, charts/, hack/release), every module at one version across the builds (hack/alignmods), then golangci-lint (.golangci.yml) on both modules, run from the Go module proxy at GOLANGCI_LINT_VERSION (its build is cached after the first run)
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT = $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
lint:
	unformatted="$$(find . -name '*.go' -not -path './.cache/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
	if [[ -n "$$unformatted" ]]; then echo "gofmt -l lists files to format:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	for m in rebalance charts hack/release; do $(GO) -C $$m vet ./...; done
	# The builds' modules at one version each (hack/alignmods/doc.go).
	$(GO) run ./hack/alignmods
	$(GOLANGCI_LINT) run ./...
	cd rebalance && $(GOLANGCI_LINT) run ./...

## bench: the side-by-side cluster benchmark (cmd/bench, docs/benchmarks.md): one table, medians of BENCH_FLAGS' --runs
BENCH_FLAGS ?=
bench:
	hack/deps.sh
	assets="$$(hack/controlplane.sh)"
	export KUBEBUILDER_ASSETS="$$assets"
	mkdir -p bin
	$(GO) build -o bin/bench ./cmd/bench
	bin/bench $(BENCH_FLAGS)

## bench-scale: the scale benchmark (docs/benchmarks.md "At scale"): 5,000 nodes, 50,000 pods through isamatch and as many through no webhook, a joining node group; not part of make test or make bench (about an hour on 2 cores)
BENCH_SCALE_FLAGS ?=
bench-scale:
	hack/deps.sh
	assets="$$(hack/controlplane.sh)"
	export KUBEBUILDER_ASSETS="$$assets"
	mkdir -p bin
	$(GO) build -o bin/bench ./cmd/bench
	bin/bench scale $(BENCH_SCALE_FLAGS)

## fuzz: each fuzz target of pkg/imageisa (tar index, ELF reader, RISC-V attributes, GNU properties) for FUZZTIME seconds (or FUZZTIME=20000x inputs), one at a time
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
	mkdir -p .cache bin
	assets="$$(hack/controlplane.sh)"
	export KUBEBUILDER_ASSETS="$$assets"
	# Kueue (its own Kubernetes release, for the leaf-group scene) builds
	# beside kube-controller-manager and the demo, after the control plane
	# whose packages it shares (see test).
	hack/kueue.sh >.cache/kueue.dir & kueue_pid=$$!
	# The rebalancing scene needs kube-controller-manager (of the node set,
	# alone: no kubelet, containerd, kube-proxy or kubectl), the leaf-group
	# scene Kueue; without them the demo skips the scene and says why.
	if node_assets="$$(hack/controlplane.sh node kube-controller-manager)"; then export ISAMATCH_NODE_ASSETS="$$node_assets"; fi
	echo "==> go build ./cmd/demo"
	$(GO) build -o bin/demo ./cmd/demo
	if wait $$kueue_pid; then export ISAMATCH_KUEUE_ASSETS="$$(tail -n1 .cache/kueue.dir)"; fi
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

## release: a release into REPO (docs/install.md, "Releases"): the three images for PLATFORMS pushed by digest and tagged VERSION, an SPDX SBOM attached to each as an OCI referrer, and dist/ (install.yaml, config/ and the Helm chart with every image pinned by digest, the SBOMs, SHA256SUMS)
##   make release VERSION=v0.1.0 REPO=registry.example.com/isamatch
##   make release VERSION=v0.1.0 REPO=127.0.0.1:5000/isamatch RELEASE_FLAGS=--insecure
VERSION ?=
RELEASE_FLAGS ?=
# Every time in the images, the SBOMs and the chart is the commit's, so the
# same commit releases the same bytes.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
release:
	if [[ -z "$(VERSION)" || -z "$(REPO)" ]]; then echo "make release: VERSION=vX.Y.Z and REPO=REGISTRY/PREFIX are required, e.g. make release VERSION=v0.1.0 REPO=registry.example.com/isamatch" >&2; exit 2; fi
	export SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	rm -rf _output/release
	# hack/images builds into an OCI layout (no registry yet); hack/release
	# pushes it.
	$(GO) run ./hack/images --repo "$(REPO)" --tag "$(VERSION)" --platforms "$(PLATFORMS)" --oci-layout _output/release/oci
	# The kubectl plugin's archives for every platform of its krew manifest,
	# and the manifest rendered with their digests.
	$(GO) run ./hack/plugin --version "$(VERSION)" --out _output/release/plugin
	$(GO) -C hack/release run . --repo "$(REPO)" --version "$(VERSION)" --oci-layout "$(CURDIR)/_output/release/oci" --plugin "$(CURDIR)/_output/release/plugin" --dist "$(CURDIR)/dist" --root "$(CURDIR)" $(RELEASE_FLAGS)
	echo "dist/: verify with (cd dist && sha256sum -c SHA256SUMS); docs/install.md says how to check the images and their SBOMs"
