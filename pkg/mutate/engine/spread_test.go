package engine

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"
)

// TestSpreadConstraintsOfGatedPods: a gated pod spreads on a key no node
// carries (its best group is not known yet), and the label keys siblings
// are counted by are bounded.
func TestSpreadConstraintsOfGatedPods(t *testing.T) {
	got := SpreadConstraints(map[string]string{"app": "x"}, Spread{Group: isa.GroupID(testnodes.MustISA(t, "rv64imfd")), Zones: true}, true)
	if len(got) != 1 || got[0].TopologyKey != groupDomainNone {
		t.Errorf("a gated pod's constraints %+v, want one on %s: its best group is not known yet", got, groupDomainNone)
	}
	many := map[string]string{}
	for k := range 40 {
		many[string(rune('a'+k%26))+string(rune('a'+k/26))] = "v"
	}
	if got := SpreadConstraints(many, Spread{Group: "g"}, false); len(got[0].LabelSelector.MatchLabels) != maxSpreadKeys {
		t.Errorf("%d labels selected for 40 labels, want the bound %d", len(got[0].LabelSelector.MatchLabels), maxSpreadKeys)
	}
}
