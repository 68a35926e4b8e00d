// Package contract is what the isamatch webhook writes into a pod that
// other programs read back: the shape of its preferred node-affinity
// terms (ISA tiers and the emulation term) and the weights they carry.
// The rebalancer, the kubectl plugin and the webhook itself recognise
// isamatch's terms here, so a change of shape is made in one place.
//
// It imports pkg/isa (the keys) and the core/v1 types only: no client, no
// controller-runtime.
package contract
