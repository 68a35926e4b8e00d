package engine

import "github.com/isamatch/isamatch/pkg/isa"

// Snapshot is an immutable view of the cluster's nodes by ISA group: what
// a decision ranks nodes from. pkg/inventory builds it from the nodes'
// labels and replaces it when a node's ISA or architecture changes; the
// engine owns the type so that tools deciding offline need no informer.
// Callers must not modify it.
type Snapshot struct {
	// Groups holds the nodes isamatch has labelled, sorted by ID.
	Groups []Group
	// ArchNodes counts every node by its kubernetes.io/arch label, labelled
	// by isamatch or not.
	ArchNodes map[string]int
	// Nodes is the number of nodes seen.
	Nodes int
}

// Group is a set of nodes with the same native ISA and the same emulation /
// cross-compilation capabilities. ID is isa.GroupID(Native), the value of the
// node label isa.isamatch.io/group; two groups share an ID when their nodes
// differ only in emulation capability.
type Group struct {
	ID       string
	Native   isa.ISA
	Emulated []isa.ISA
	// Executes are the architectures whose programs the group's nodes
	// run through QEMU (isa.EmuExecLabel); Emulated may also count what a
	// cross compiler builds.
	Executes []isa.Arch
	Nodes    int
	// Name is Native.Short(), computed once for messages.
	Name string
	// Members are the group's nodes, sorted by name, with all their
	// labels: a pod whose own nodeSelector or required affinity excludes
	// some nodes is ranked among the nodes it can use.
	Members []Member
}

// Member is one node of a group. Labels is the inventory's map: never
// modify it.
type Member struct {
	Name   string
	Labels map[string]string
}
