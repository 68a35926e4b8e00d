package engine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRankMemoEvicts checks that the ranking memo stays within its bounds
// and keeps caching (the most recent entries) once full.
func TestRankMemoEvicts(t *testing.T) {
	tests := []struct {
		name    string
		groups  int // group ids per entry: the entry's size
		entries int
	}{
		{name: "many small entries", groups: 1, entries: 3 * maxRankMemo},
		{name: "few large entries", groups: 2000, entries: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newRankMemo(&Snapshot{})
			ids := make([]string, tc.groups)
			for k := range ids {
				ids[k] = fmt.Sprintf("%010d", k)
			}
			r := ranking{preferred: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "g", Operator: corev1.NodeSelectorOpIn, Values: ids}},
			}}}}
			for i := range tc.entries {
				m.add(fmt.Appendf(nil, "key-%d", i), r)
				if _, ok := m.get(fmt.Appendf(nil, "key-%d", i)); !ok {
					t.Fatalf("entry %d not found right after it was added", i)
				}
			}
			if n := m.len(); n > maxRankMemo {
				t.Errorf("memo holds %d entries, bound is %d", n, maxRankMemo)
			}
			if b := m.size(); b > maxRankMemoBytes || b <= 0 {
				t.Errorf("memo holds %d bytes, bound is %d", b, maxRankMemoBytes)
			}
			if _, ok := m.get([]byte("key-0")); ok {
				t.Errorf("the oldest entry is still there after %d more were added", tc.entries-1)
			}
		})
	}
}
