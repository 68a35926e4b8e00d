package engine

// Ranking among the nodes a pod can use.
//
// The tiers rank ISA groups; a pod whose own spec.nodeSelector or required
// node affinity confines it to some nodes (a node pool, a zone) can only
// use the groups' nodes those admit. Ranked over the whole cluster, such a
// pod's best tier may name groups it cannot use: the scheduler then
// normalises the tiers it can use, across architectures too, and a richer
// node of another architecture can outscore the plainest node of the
// pod's own (a multi-architecture pod confined to a pool without the
// cluster's leanest arm64 nodes preferred an x86-64-v4 node of tier 2 over
// the pool's plainest arm64 node of tier 3). So the groups are ranked by
// the nodes the pod's own constraints admit (Input.Own): a group none of
// whose nodes they admit is left out, and a group's size is what they
// admit of it. When they admit no node of any ranked group, the groups are
// ranked over every node as before, so that nodes which join later are
// ordered.

// NodeConstraints is a pod's own node constraints (spec.nodeSelector and
// required node affinity), evaluated as the scheduler evaluates them. The
// engine declares it so that it needs no scheduler library; pkg/mutate
// implements it.
type NodeConstraints interface {
	// MemoKey identifies the constraints in the ranking memo: equal keys
	// admit the same nodes.
	MemoKey() []byte
	// Admits reports whether the constraints admit node m.
	Admits(m Member) bool
}

// admitted counts the members of g that own admits.
func admitted(own NodeConstraints, g *Group) int {
	n := 0
	for _, m := range g.Members {
		if own.Admits(m) {
			n++
		}
	}
	return n
}
