// Command alignmods keeps the Go modules this repository builds at one
// version of every module they share.
//
// The control plane (hack/controlplane), the node binaries (hack/node),
// metrics-server (hack/metrics-server), Kueue (hack/kueue), the project
// (.), the rebalancer (rebalance), the Helm chart's tests (charts) and the
// release tool (hack/release) are modules of their own, each resolved by
// its own go.mod.
// Go's build cache reuses a compiled package only when the package and
// everything it imports are the same source built the same way, so a
// module one build takes at v1.2.0 and another at v1.2.1 is compiled twice,
// with every package above it. Kept at one version (and built alike: static,
// -trimpath, no DWARF), the thousand or so packages the control plane
// shares with the tests compile once on a new machine.
//
//	go run ./hack/alignmods       list the modules at more than one version; exit 1 if any
//	go run ./hack/alignmods -w    raise each to the highest version any build uses, then go mod tidy
//
// Only modules that provide a package some build compiles count (go list
// -deps of each build's packages, CGO_ENABLED=0); a module a go.mod merely
// mentions does not. Versions only go up: a build that needs a newer
// version raises it in every build. Where a go.mod replaces a module (the
// control plane's Kubernetes staging modules), the replacement's version is
// raised. Kueue (hack/kueue) is built against its own Kubernetes release,
// which the control plane's cannot replace: its k8s.io modules and
// controller-runtime are left out of the comparison, and every other module
// it compiles (golang.org/x, protobuf, gRPC, OpenTelemetry, Prometheus,
// etcd's client, ...) is kept at the others' version, so those packages
// compile once for both.
package main
