package leafcluster

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/internal/experiment"
)

// LeafLabel is the node label naming a node's network leaf group. isamatch
// defines no such key: the cluster's operator chooses it (Kueue's Topology
// levels, the PodGroup's topology constraint).
const LeafLabel = "network.example.com/leaf-group"

const (
	// Vector asks for RISC-V V; Plain asks for any rv64gc node.
	Vector = "rv64gcv"
	Plain  = "rv64gc"
	// A node has 1 CPU and a replica asks 600m: one replica per node, as
	// one server per rank in the source's model.
	NodeMilliCPU = 1000
	ReplicaCPU   = "600m"
)

// Group is one leaf group: its size and how many of its nodes have V.
type Group struct {
	Name string
	// Fixture is the V nodes' host root.
	Fixture  string
	Vector   int
	NoVector int
	Arch     string
	X86Nodes int
}

// Size is the group's node count.
func (g Group) Size() int { return g.Vector + g.NoVector + g.X86Nodes }

// Groups are the leaf groups. The V-capable counts (4, 6, 5) do not follow
// the sizes (4, 8, 16): the smallest group that holds n V replicas is not
// always the smallest group with n nodes.
var Groups = []Group{
	{Name: "rv-a", Fixture: "spacemit-k1", Vector: 4, Arch: "riscv64"},
	{Name: "rv-b", Fixture: "spacemit-k1", Vector: 6, NoVector: 2, Arch: "riscv64"},
	{Name: "rv-c", Fixture: "qemu-virt-rv64gcv", Vector: 5, NoVector: 11, Arch: "riscv64"},
	{Name: "x86", Arch: "amd64", X86Nodes: 4},
}

// Nodes returns the simulated nodes, named <group>-<index>: per group its
// V nodes first, then VisionFive 2 boards (rv64gc, no V), or x86-64-v3
// servers.
func Nodes() []experiment.NodeSpec {
	var nodes []experiment.NodeSpec
	add := func(g Group, fixture string, n int) {
		for range n {
			name := g.Name + "-" + strconv.Itoa(len(nodes))
			nodes = append(nodes, experiment.NodeSpec{Name: name, Fixture: fixture, Arch: g.Arch, MilliCPU: NodeMilliCPU, MemMi: 4096})
		}
	}
	for _, g := range Groups {
		add(g, g.Fixture, g.Vector)
		add(g, "visionfive2", g.NoVector)
		add(g, "x86-64-v3", g.X86Nodes)
	}
	return nodes
}

// GroupOf returns the leaf group of a node named by Nodes.
func GroupOf(node string) string {
	if i := strings.LastIndex(node, "-"); i > 0 {
		return node[:i]
	}
	return node
}

// LeafLabels are the labels a node of Nodes gets at creation: its group.
func LeafLabels(n experiment.NodeSpec) map[string]string {
	return map[string]string{LeafLabel: GroupOf(n.Name)}
}

// Placement counts bound pods per leaf group.
func Placement(pods []*corev1.Pod) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			out[GroupOf(p.Spec.NodeName)]++
		}
	}
	return out
}
