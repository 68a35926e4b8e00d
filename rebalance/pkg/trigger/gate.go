package trigger

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/isamatch/isamatch/pkg/isa"
)

// gate limits how often one node can start a cycle. A node's owner
// controls what the triggers read about it (its readiness, its pods' load
// if it runs them, the group label its labeler writes from what the host
// reports), so each node may start at most one triggered cycle per
// cooldown. Two events a legitimate node goes through once are exempt: its
// first appearance as usable and its first ISA group label (the labeler
// labels a new node a moment after it turns Ready, and tiered pods can
// use it only then). What the gate remembers of a node outlives the Node
// object for a cooldown, so deleting and re-creating it is no way around.
// It is not safe for concurrent use; Watch serialises it.
type gate struct {
	cooldown time.Duration
	clk      clock.PassiveClock
	nodes    map[string]*gated
}

// gated is what the gate remembers of one node.
type gated struct {
	// seen: the node has been usable; labelled: it has had a group label.
	seen, labelled bool
	// last is when it last started a cycle; deleted when its Node was
	// deleted (zero while it exists).
	last, deleted time.Time
}

func newGate(cooldown time.Duration, clk clock.PassiveClock) *gate {
	return &gate{cooldown: cooldown, clk: clk, nodes: map[string]*gated{}}
}

// observe records what cur (usable or not) says about the node, without
// deciding anything: for the informers' initial list.
func (g *gate) observe(name string, cur *v1.Node, usable bool) {
	n := g.node(name)
	n.seen = n.seen || usable
	n.labelled = n.labelled || (cur != nil && cur.Labels[isa.GroupLabel] != "")
}

// allow reports whether the node, usable now, may start a cycle for a
// join (join true) or a threshold crossing, and if so counts it as
// started. cur is the node as it is now (nil for a crossing seen on a pod).
func (g *gate) allow(name string, cur *v1.Node, join bool) bool {
	n := g.node(name)
	first := join && (!n.seen || (!n.labelled && cur.Labels[isa.GroupLabel] != ""))
	g.observe(name, cur, true)
	now := g.clk.Now()
	if !first && !n.last.IsZero() && now.Sub(n.last) < g.cooldown {
		return false
	}
	n.last = now
	return true
}

// forget marks the node deleted, and drops the records of nodes deleted
// (and last started a cycle) more than a cooldown ago.
func (g *gate) forget(name string) {
	now := g.clk.Now()
	g.node(name).deleted = now
	for k, n := range g.nodes {
		if !n.deleted.IsZero() && now.Sub(n.deleted) >= g.cooldown && now.Sub(n.last) >= g.cooldown {
			delete(g.nodes, k)
		}
	}
}

// node returns the record of name, which exists (again) as far as the
// caller knows.
func (g *gate) node(name string) *gated {
	n, ok := g.nodes[name]
	if !ok {
		n = &gated{}
		g.nodes[name] = n
	}
	n.deleted = time.Time{}
	return n
}
