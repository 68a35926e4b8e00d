// Package inventory keeps the webhook's view of the cluster's nodes, grouped
// by instruction set: for every distinct (native ISA, emulation capability)
// pair the number of nodes that have it, plus the number of nodes per
// kubernetes.io/arch whether isamatch has labelled them or not.
//
// The entry points are [New], an inventory fed node by node ([Inventory.Set],
// [Inventory.Delete]), and [NewStatic] for a fixed set of nodes (tests,
// benchmarks, kubectl isa). [Inventory.Snapshot] returns an immutable
// [engine.Snapshot] (the decision engine's type: the engine ranks from it
// and needs no informer); taking one is an atomic pointer load, and a new
// one is built only when a node's isamatch labels or architecture change,
// in time proportional to the number of groups, not of nodes.
//
// The package links no Kubernetes client: package pkg/inventory/informer
// feeds an inventory and the [Emulators] index from a controller-runtime
// manager's metadata-only Node informer.
package inventory
