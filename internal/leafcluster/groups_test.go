package leafcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodesAndGroups(t *testing.T) {
	sizes := map[string]int{}
	for _, n := range Nodes() {
		sizes[LeafLabels(n)[LeafLabel]]++
	}
	want := map[string]int{}
	for _, g := range Groups {
		want[g.Name] = g.Size()
	}
	if diff := cmp.Diff(want, sizes); diff != "" {
		t.Errorf("nodes per leaf label (-want +got):\n%s", diff)
	}
}

func TestGroupOf(t *testing.T) {
	for _, tc := range []struct{ node, want string }{
		{"rv-a-0", "rv-a"},
		{"rv-c-27", "rv-c"},
		{"x86-31", "x86"},
		{"plain", "plain"},
	} {
		if got := GroupOf(tc.node); got != tc.want {
			t.Errorf("GroupOf(%q) = %q, want %q", tc.node, got, tc.want)
		}
	}
}
