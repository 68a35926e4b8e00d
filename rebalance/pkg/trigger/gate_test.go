package trigger

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestGate feeds one node's events in order, the clock advancing between
// them, and checks which of them may start a cycle with a 5-minute
// cooldown.
func TestGate(t *testing.T) {
	plain := node("n", "4", nil)
	group := func(g string) *v1.Node { return node("n", "4", map[string]string{isa.GroupLabel: g}) }
	type step struct {
		after   time.Duration
		initial *v1.Node // observed in the initial list
		forget  bool
		join    *v1.Node // a join (or relabel) of this node
		up      bool     // a threshold crossing
		want    bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a new node, then its first label: both at once", []step{
			{join: plain, want: true},
			{after: time.Second, join: group("g1"), want: true},
		}},
		{"a node owner flipping the group label: one cycle per cooldown", []step{
			{join: group("g1"), want: true},
			{after: 10 * time.Second, join: group("g2"), want: false},
			{after: 10 * time.Second, join: group("g1"), want: false},
			{after: 5 * time.Minute, join: group("g2"), want: true},
			{after: time.Second, join: group("g1"), want: false},
		}},
		{"a crossing first: a later join is no first appearance", []step{
			{up: true, want: true},
			{after: time.Second, join: plain, want: false},
		}},
		{"a threshold crossing within the cooldown of a join", []step{
			{join: group("g1"), want: true},
			{after: time.Minute, up: true, want: false},
			{after: 4 * time.Minute, up: true, want: true},
			{after: time.Minute, up: true, want: false},
		}},
		{"re-created within the cooldown: not a first join", []step{
			{join: group("g1"), want: true},
			{after: time.Second, forget: true},
			{after: time.Second, join: group("g1"), want: false},
		}},
		{"labelled in the initial list: relabels are not first labels", []step{
			{initial: group("g1")},
			{after: time.Second, join: group("g2"), want: true},
			{after: time.Second, join: group("g1"), want: false},
		}},
		{"unlabelled in the initial list: its first label is exempt", []step{
			{initial: plain},
			{after: time.Second, up: true, want: true},
			{after: time.Second, join: group("g1"), want: true},
			{after: time.Second, join: group("g2"), want: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			g := newGate(5*time.Minute, clk)
			var want, got []bool
			for _, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.after))
				switch {
				case s.initial != nil:
					g.observe("n", s.initial, true)
				case s.forget:
					g.forget("n")
				case s.join != nil:
					want, got = append(want, s.want), append(got, g.allow("n", s.join, true))
				case s.up:
					want, got = append(want, s.want), append(got, g.allow("n", nil, false))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("allowed per event (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGateForgets: records of nodes deleted more than a cooldown ago go.
func TestGateForgets(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	g := newGate(time.Minute, clk)
	g.allow("old", node("old", "4", nil), true)
	g.forget("old")
	clk.SetTime(clk.Now().Add(2 * time.Minute))
	g.forget("other")
	if _, ok := g.nodes["old"]; ok {
		t.Errorf("the record of a node deleted 2 minutes ago is kept with a 1-minute cooldown")
	}
}
