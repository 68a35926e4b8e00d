package bench

import (
	"fmt"
	"time"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// DecideCost is the decision work per pod over one inventory size.
type DecideCost struct {
	Nodes, Groups int
	// Warm is the steady state (the ranking memoised per snapshot); Cold
	// scans and ranks every group for every pod.
	Warm, Cold time.Duration
}

// MeasureDecide times mutate.Matcher.Decide for a pod with a request and
// a three-architecture image over inventory.NewStatic of nodes spread over
// groups ISA groups, for at least dur per figure. Cold alternates between
// two snapshots of equal content, so the per-snapshot memo never hits.
func MeasureDecide(nodes, groups int, dur time.Duration) (DecideCost, error) {
	gs, err := GroupISAs(groups)
	if err != nil {
		return DecideCost{}, err
	}
	set := NodeSet("n", nodes, gs)
	a, b := inventory.NewStatic(set).Snapshot(), inventory.NewStatic(set).Snapshot()
	if len(a.Groups) != groups || a.Nodes != nodes {
		return DecideCost{}, fmt.Errorf("inventory has %d groups and %d nodes, want %d and %d", len(a.Groups), a.Nodes, groups, nodes)
	}
	rq, err := isa.ParseRequest("rv64gc_zba_zbb")
	if err != nil {
		return DecideCost{}, fmt.Errorf("parse request: %w", err)
	}
	in := mutate.Input{Request: &rq, RequestFrom: "annotation isa.request", RequestText: "rv64gc_zba_zbb",
		Images: []mutate.ImageInfo{{Ref: "bench/app:v1", Platforms: []registry.Platform{
			{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "riscv64"},
		}}}}
	m := mutate.NewMatcher()
	if d := m.Decide(in, a); d.MatchingNodes == 0 || len(d.Preferred) == 0 || d.Denied != "" {
		return DecideCost{}, fmt.Errorf("decision matches %d nodes with %d preferred terms (denied %q): the benchmark pod must match", d.MatchingNodes, len(d.Preferred), d.Denied)
	}
	timeIt := func(snaps ...*Snapshot) time.Duration {
		n := 0
		start := time.Now()
		for time.Since(start) < dur {
			for range 64 {
				m.Decide(in, snaps[n%len(snaps)])
				n++
			}
		}
		return time.Since(start) / time.Duration(n)
	}
	return DecideCost{Nodes: nodes, Groups: groups, Warm: timeIt(a), Cold: timeIt(a, b)}, nil
}

// Snapshot is inventory.Snapshot, named here for brevity.
type Snapshot = inventory.Snapshot
