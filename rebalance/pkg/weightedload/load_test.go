package weightedload

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
)

func TestClusterAverageIsSizeWeighted(t *testing.T) {
	// 2 of 2 CPUs and 2 of 8: the plain mean of the shares is 62.5%, the
	// size-weighted average 40%.
	loads := []*load{
		newLoad(node("small", "2"), []*v1.Pod{pod("a", "small", "2")}),
		newLoad(node("big", "8"), []*v1.Pod{pod("b", "big", "2"), pod("done", "big", "6", func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded })}),
	}
	a := clusterAverage(loads)
	if diff := cmp.Diff(0.4, a.cpu, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("average CPU share (-want +got):\n%s", diff)
	}
	var scores []float64
	for _, l := range loads {
		c, _ := l.scores(a)
		scores = append(scores, c)
	}
	if diff := cmp.Diff([]float64{-0.6, 0.15}, scores, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("CPU scores (-want +got):\n%s", diff)
	}
}

func TestHighLoadQueue(t *testing.T) {
	// Average 12/24 = 50%. a: 3/4 (score -0.25), b: 6/8 (-0.25, over no
	// threshold), c: 3.8/4 (-0.45 and above 90%), d: 0.2/8 (+), e: 2.2/4
	// (-0.05, within the tolerance).
	loads := []*load{
		newLoad(node("a", "4"), []*v1.Pod{pod("a1", "a", "3")}),
		newLoad(node("b", "8"), []*v1.Pod{pod("b1", "b", "6")}),
		newLoad(node("c", "4"), []*v1.Pod{pod("c1", "c", "3800m")}),
		newLoad(node("d", "8"), []*v1.Pod{pod("d1", "d", "200m")}),
		newLoad(node("e", "4"), []*v1.Pod{pod("e1", "e", "2200m")}),
	}
	var got []string
	for _, l := range highLoadQueue(loads, clusterAverage(loads), 0.1, 1) {
		got = append(got, l.node.Name)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, got); diff != "" {
		t.Errorf("queue, worst first, ties by name (-want +got):\n%s", diff)
	}
	// A node above the threshold jumps ahead of a worse one.
	loads = []*load{
		newLoad(node("worse", "2"), []*v1.Pod{pod("w", "worse", "1800m")}), // 90%, not above
		newLoad(node("hot", "100"), []*v1.Pod{pod("h", "hot", "91")}),      // 91%
		newLoad(node("idle", "100"), nil),
	}
	got = nil
	for _, l := range highLoadQueue(loads, clusterAverage(loads), 0.1, 0.9) {
		got = append(got, l.node.Name)
	}
	if diff := cmp.Diff([]string{"hot", "worse"}, got); diff != "" {
		t.Errorf("queue with a node above 90%% (-want +got):\n%s", diff)
	}
}

func TestEvictionOrderAndMovable(t *testing.T) {
	pods := []*v1.Pod{
		pod("always-guaranteed", "n", "1", guaranteed),
		pod("always-burstable-small", "n", "500m"),
		pod("always-burstable-big", "n", "1"),
		pod("onfailure-guaranteed", "n", "1", restart(v1.RestartPolicyOnFailure), guaranteed),
		pod("onfailure-burstable", "n", "1", restart(v1.RestartPolicyOnFailure)),
		pod("never", "n", "1", restart(v1.RestartPolicyNever)),
		pod("local-storage", "n", "1", emptyDir),
		pod("best-effort", "n", "0"),
	}
	var got []string
	for _, p := range slices.SortedFunc(slices.Values(slices.DeleteFunc(slices.Clone(pods), func(p *v1.Pod) bool { return !movable(p) })), evictionOrder) {
		got = append(got, p.Name)
	}
	want := []string{"onfailure-burstable", "onfailure-guaranteed", "always-burstable-big", "always-burstable-small", "always-guaranteed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("movable pods in eviction order (-want +got):\n%s", diff)
	}
}

// A move the scheduler's default spreading would undo is not planned: the
// target must run no more of the pod's siblings than the source will.
func TestSpreadAllows(t *testing.T) {
	bare := func(p *v1.Pod) { p.OwnerReferences = nil }
	for _, tc := range []struct {
		name     string
		src, dst []*v1.Pod
		want     bool
	}{
		{name: "target runs fewer siblings", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: nil, want: true},
		{name: "target runs as many as the source will", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: []*v1.Pod{pod("c", "d", "1")}, want: true},
		{name: "target runs more than the source will", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: []*v1.Pod{pod("c", "d", "1"), pod("e", "d", "1")}, want: false},
		{name: "a bare pod has no siblings", src: []*v1.Pod{pod("a", "s", "1", bare)}, dst: []*v1.Pod{pod("c", "d", "1"), pod("e", "d", "1")}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := newLoad(node("s", "4"), tc.src), newLoad(node("d", "4"), tc.dst)
			if got := src.spreadAllows(tc.src[0], dst); got != tc.want {
				t.Errorf("spreadAllows = %t, want %t (source %v, target %v)", got, tc.want, src.owners, dst.owners)
			}
		})
	}
	src, dst := newLoad(node("s", "4"), []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1"), pod("c", "s", "1")}), newLoad(node("d", "4"), nil)
	src.move(pod("a", "s", "1"), dst)
	if !src.spreadAllows(pod("b", "s", "1"), dst) || src.spreadAllows(pod("c", "s", "1"), newLoad(node("x", "4"), []*v1.Pod{pod("x1", "x", "1"), pod("x2", "x", "1")})) {
		t.Errorf("after one planned move the counts are %v and %v", src.owners, dst.owners)
	}
}
