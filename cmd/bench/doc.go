// Command bench measures what isamatch costs a cluster, side by side with
// the same cluster without it, and prints one table: admission latency and
// throughput, scheduling throughput, decision work per pod against the
// inventory size, cold image resolution, the webhook's and the labeler's
// memory, and one labeler pass. `make bench` builds the control plane and
// runs it; see docs/benchmarks.md. The work is in internal/bench.
//
//	KUBEBUILDER_ASSETS="$(hack/controlplane.sh)" go run ./cmd/bench --runs=3
package main
