package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// onVector is the scene's state before the cycle: the imfd nodes were
// full, every replica ran on a vector node.
var onVector = map[string]map[string]int{
	imfdApp: {"imfdv-1": 4, "imfdv-2": 4},
	vecApp:  {"imfdv-1": 1, "imfdv-2": 1},
}

func TestPrintRebalance(t *testing.T) {
	r := rebalanceResult{
		Nodes:  rebalanceNodes,
		Before: onVector,
		After: map[string]map[string]int{
			imfdApp: {"imfd-1": 5, "imfd-2": 3},
			vecApp:  {"imfdv-1": 1, "imfdv-2": 1},
		},
		Evicted: 8,
		Cycles:  1,
		Took:    1500 * time.Millisecond,
	}
	var b strings.Builder
	printRebalance(&b, r)
	want := `rebalancing: 8 rv64imfd replicas (PDB maxUnavailable 1) placed while the imfd nodes were full, then the filler went;
rebalancer cycles (config/components/rebalance/policy.yaml, ISAFit limits raised to 8, minPodAge 1s; the scheduler's default configuration):
node     isa         cpu rv64imfd before rv64imfd after rv64imfdv before rv64imfdv after
imfd-1   rv64imfd      4               0              5                0               0
imfd-2   rv64imfd      4               0              3                0               0
imfdv-1  rv64imfdv     8               4              0                1               1
imfdv-2  rv64imfdv     8               4              0                1               1
evictions: 8 in 1 cycle(s), 1.5s; one more cycle evicted 0; replacements evicted again: 0
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("printRebalance (-want +got):\n%s", diff)
	}
}

func TestRebalanceVerdict(t *testing.T) {
	tests := []struct {
		name      string
		after     map[string]map[string]int
		evicted   int
		undecided int
		undone    int
		settled   int
		want      []string
	}{
		{
			name:    "every replica moved, once",
			after:   map[string]map[string]int{imfdApp: {"imfd-1": 4, "imfd-2": 4}, vecApp: {"imfdv-1": 1, "imfdv-2": 1}},
			evicted: 8,
		},
		{
			name:    "one left on a vector node",
			after:   map[string]map[string]int{imfdApp: {"imfd-1": 4, "imfd-2": 3, "imfdv-2": 1}, vecApp: {"imfdv-1": 1, "imfdv-2": 1}},
			evicted: 7,
			want: []string{
				"rebalance: 1 of 8 rv64imfd replicas still on a vector node after 1 cycles",
				"rebalance: 7 evictions, want 8 (the rv64imfd replicas that had a better node)",
			},
		},
		{
			name:      "admitted without the webhook",
			after:     onVector,
			undecided: 8,
			want: []string{
				"rebalance: 8 of 8 rv64imfd replicas were admitted without isamatch's decision (the webhook did not answer in time; its failurePolicy is Ignore), so they had no better tier",
				"rebalance: 8 of 8 rv64imfd replicas still on a vector node after 1 cycles",
				"rebalance: 0 evictions, want 8 (the rv64imfd replicas that had a better node)",
			},
		},
		{
			name:    "a replacement evicted again",
			after:   map[string]map[string]int{imfdApp: {"imfd-1": 4, "imfd-2": 4}, vecApp: {"imfdv-1": 1, "imfdv-2": 1}},
			evicted: 8, undone: 1, settled: 1,
			want: []string{"rebalance: the rebalancer did not stay put: 1 evictions in the cycle after the moves, 1 replacements evicted again"},
		},
		{
			name:    "a vector replica moved too",
			after:   map[string]map[string]int{imfdApp: {"imfd-1": 4, "imfd-2": 4}, vecApp: {"imfdv-1": 2}},
			evicted: 9,
			want:    []string{"rebalance: 9 evictions, want 8 (the rv64imfd replicas that had a better node)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rebalanceVerdict(rebalanceResult{Nodes: rebalanceNodes, Before: onVector, After: tc.after, Evicted: tc.evicted, Undecided: tc.undecided,
				Cycles: 1, Undone: tc.undone, AfterSettled: tc.settled})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rebalanceVerdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountByNode(t *testing.T) {
	pod := func(name, app, node string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
			Spec:       corev1.PodSpec{NodeName: node},
		}
	}
	after := []corev1.Pod{pod("imfd-c", imfdApp, "imfd-1"), pod("imfd-b", imfdApp, "imfdv-2"), pod("vec-a", vecApp, "imfdv-1")}
	want := map[string]map[string]int{imfdApp: {"imfd-1": 1, "imfdv-2": 1}, vecApp: {"imfdv-1": 1}}
	if diff := cmp.Diff(want, countByNode(after)); diff != "" {
		t.Errorf("countByNode (-want +got):\n%s", diff)
	}
	if got := misplaced(countByNode(after)); got != 1 {
		t.Errorf("misplaced = %d, want 1 (imfd-b on imfdv-2)", got)
	}
}
