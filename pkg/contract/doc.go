// Package contract is what the isamatch webhook writes into a pod that
// other programs read back: the decision it stores (DecisionCounts, in
// isa.DecisionAnnotation), the shape of its preferred node-affinity terms
// (ISA tiers and the emulation term) and the weights they carry. The
// rebalancer, the kubectl plugin, the pod events, the misplacement watcher
// and the webhook itself read them here, so a change of schema or shape is
// made in one place.
//
// It imports pkg/isa (the keys), pkg/sanitize and the core/v1 types only:
// no client, no controller-runtime.
package contract
