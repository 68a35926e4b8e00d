package engine_test

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"
)

// BenchmarkDecide is the matching work alone for one pod: images and
// request to required terms, tiers over 200 groups, summary. Goal < 10µs.
// "warm" is the steady state (the ranking of these alternatives against this
// snapshot is remembered after the first pod); "cold" alternates between two
// snapshots of equal content, so every decision scans all 200 groups.
func BenchmarkDecide(b *testing.B) {
	b.Run("warm", func(b *testing.B) { benchDecide(b, false) })
	b.Run("cold", func(b *testing.B) { benchDecide(b, true) })
}

func benchDecide(b *testing.B, cold bool) {
	cluster := testnodes.Bench(b)
	snaps := []*engine.Snapshot{inventory.NewStatic(cluster).Snapshot()}
	if cold {
		snaps = append(snaps, inventory.NewStatic(cluster).Snapshot())
	}
	rq, err := isa.ParseRequest("rv64gc_zba_zbb")
	if err != nil {
		b.Fatal(err)
	}
	linux := func(arch string) engine.Platform { return engine.Platform{OS: "linux", Architecture: arch} }
	in := engine.Input{Request: &rq, RequestFrom: "annotation isa.request", RequestText: "rv64gc_zba_zbb", Images: []engine.ImageInfo{
		{Ref: "riscv:1", Platforms: []engine.Platform{linux("riscv64")}},
		{Ref: "multi:1", Platforms: []engine.Platform{linux("amd64"), linux("arm64"), linux("riscv64"), {OS: "unknown", Architecture: "unknown"}}},
	}}
	m := engine.NewMatcher()
	d := m.Decide(in, snaps[0])
	if len(d.Required) != 1 || len(d.Preferred) < 3 || d.MatchingNodes != 50*25 { // masks < 200 with zba and zbb: 50 groups
		b.Fatalf("required=%d preferred=%d matching=%d", len(d.Required), len(d.Preferred), d.MatchingNodes)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Decide(in, snaps[i%len(snaps)])
		i++
	}
}
