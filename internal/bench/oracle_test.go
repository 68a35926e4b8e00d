package bench

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// benchCluster is make bench's node set at a small size: 40 nodes in 20
// groups, two nodes each.
func benchCluster(t *testing.T) (map[string]map[string]string, map[string]isa.ISA) {
	t.Helper()
	gs, err := GroupISAs(20)
	if err != nil {
		t.Fatal(err)
	}
	return NodeSet(benchNodes, 40, gs), NodeISAs(benchNodes, 40, gs)
}

// nodesOf returns the names of the nodes whose native ISA is s.
func nodesOf(t *testing.T, native map[string]isa.ISA, s string) []string {
	t.Helper()
	want, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name, i := range native {
		if isa.GroupID(i) == isa.GroupID(want) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no node of %s", s)
	}
	return out
}

// TestFitJudge: the judge tells a pod on a node that cannot run it, on one
// that can but is not the best fit, and on a best-fit node apart.
func TestFitJudge(t *testing.T) {
	_, native := benchCluster(t)
	j, err := newFitJudge(native)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(request, node string) *corev1.Pod {
		w := testbed.MakePod("p", "ns")
		if request != "" {
			w = w.Annotation(isa.BareRequestAnnotation, request)
		}
		p := w.Obj()
		p.Spec.NodeName = node
		return p
	}
	for _, tc := range []struct {
		name, request, node string
		correct, best       bool
	}{
		{"x86-64-v3 on x86-64-v2", "x86-64-v3", nodesOf(t, native, "x86-64-v2")[0], false, false},
		{"x86-64-v3 on x86-64-v4", "x86-64-v3", nodesOf(t, native, "x86-64-v4")[0], true, false},
		{"x86-64-v3 on x86-64-v3", "x86-64-v3", nodesOf(t, native, "x86-64-v3")[0], true, true},
		{"rv64gc on rv64gc_zba", "rv64gc", nodesOf(t, native, "rv64gc_zba")[0], true, false},
		{"rv64gc on rv64gc", "rv64gc", nodesOf(t, native, "rv64gc")[0], true, true},
		{"no request on arm64+sve", "", nodesOf(t, native, "arm64+sve")[0], true, false},
		{"no request on arm64", "", nodesOf(t, native, "arm64")[0], true, true},
		{"unbound", "rv64gc", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v fitCount
			if err := j.add(pod(tc.request, tc.node), &v); err != nil {
				t.Fatal(err)
			}
			if v.pods != 1 || (v.correct == 1) != tc.correct || (v.bestFit == 1) != tc.best {
				t.Errorf("%+v, want correct %v, best fit %v", v, tc.correct, tc.best)
			}
		})
	}
}

// TestSpreadSkew: the skew counts a sibling set's pods per domain of its
// constraint's key, zero domains included, and keeps sets apart.
func TestSpreadSkew(t *testing.T) {
	nodes, native := benchCluster(t)
	group := nodesOf(t, native, "rv64gc")
	other := nodesOf(t, native, "x86-64")
	key := ""
	for k := range nodes[group[0]] {
		if isa.IsGroupDomainLabel(k) {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("node %s has no group domain label: %v", group[0], nodes[group[0]])
	}
	pod := func(app, node string) *corev1.Pod {
		p := testbed.MakePod("p", "ns").Label("app", app).Obj()
		p.Spec.NodeName = node
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 3, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
		return p
	}
	var pods []*corev1.Pod
	for range 4 {
		pods = append(pods, pod("a", group[0]))
	}
	pods = append(pods, pod("a", other[0])) // off the group: not in a domain
	for range 2 {
		pods = append(pods, pod("b", group[0]), pod("b", group[1]))
	}
	skew, spreads := spreadSkew(pods, nodes)
	if skew != 4 || len(spreads) != 2 {
		t.Errorf("skew %d over %d sets, want 4 (a: 4 on one node, 0 on the other) over 2", skew, len(spreads))
	}
	if got := fmt.Sprint(spreads); !strings.Contains(got, "0..4 over 2 nodes") || !strings.Contains(got, "2..2 over 2 nodes") {
		t.Errorf("spreads %s, want a set at 0..4 and one at 2..2, over 2 nodes each", got)
	}
	if skew, _ := spreadSkew(pods[5:], nodes); skew != 0 {
		t.Errorf("skew %d for b alone, want 0 (2 and 2)", skew)
	}
}
