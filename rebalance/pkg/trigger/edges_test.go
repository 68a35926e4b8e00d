package trigger

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestJoined(t *testing.T) {
	pool := labels.SelectorFromSet(labels.Set{"pool": "a"})
	plain := node("n", "4", map[string]string{"pool": "a"})
	labelled := node("n", "4", map[string]string{"pool": "a", isa.GroupLabel: "rv64imfd"})
	relabelled := node("n", "4", map[string]string{"pool": "a", isa.GroupLabel: "rv64imfdv"})
	other := node("n", "4", map[string]string{"pool": "b"})
	tests := []struct {
		name     string
		old, cur *v1.Node
		sel      labels.Selector
		want     bool
	}{
		{"new Ready node", nil, plain, labels.Everything(), true},
		{"new NotReady node", nil, notReady(plain), labels.Everything(), false},
		{"turns Ready", notReady(plain), plain, labels.Everything(), true},
		{"uncordoned", cordoned(plain), plain, labels.Everything(), true},
		{"new Ready node still tainted not-ready", nil, taintedNotReady(plain), labels.Everything(), false},
		{"not-ready taint removed from a Ready node", taintedNotReady(plain), plain, labels.Everything(), true},
		{"cordoned", plain, cordoned(plain), labels.Everything(), false},
		{"turns NotReady", plain, notReady(plain), labels.Everything(), false},
		{"status update of a Ready node", plain, plain.DeepCopy(), labels.Everything(), false},
		{"labeler adds the ISA group", plain, labelled, labels.Everything(), true},
		{"labeler changes the ISA group", labelled, relabelled, labels.Everything(), true},
		{"ISA group removed", labelled, plain, labels.Everything(), false},
		{"enters the policy's node selector", other, plain, pool, true},
		{"outside the policy's node selector", nil, other, pool, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := joined(tc.old, tc.cur, tc.sel); got != tc.want {
				t.Errorf("joined = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLoadsCrossings feeds pod and node changes in order and checks which
// of them report an upward crossing of 90% of allocatable CPU.
func TestLoadsCrossings(t *testing.T) {
	type step struct {
		pod     *v1.Pod // set (or deleted with uid when nil and node is nil)
		uid     string
		node    *v1.Node
		forget  string
		crossed string // node reported, "" for none
	}
	a := node("a", "4", nil)
	tests := []struct {
		name  string
		steps []step
	}{
		{"fills up to 90% and over it: one crossing", []step{
			{node: a},
			{pod: pod("p1", "a", "3")},
			{pod: pod("p2", "a", "600m"), crossed: "a"}, // 3.6 of 4 = 90%
			{pod: pod("p3", "a", "100m")},               // still above: no edge
		}},
		{"drops below and crosses again", []step{
			{node: a},
			{pod: pod("p1", "a", "3700m"), crossed: "a"},
			{uid: "p1"},
			{pod: pod("p2", "a", "3700m"), crossed: "a"},
		}},
		{"hovering around the threshold: one crossing until it drops below the re-arm line", []step{
			{node: a},
			{pod: pod("p1", "a", "3500m")}, // 87.5%
			{pod: pod("p2", "a", "200m"), crossed: "a"}, // 92.5%
			{uid: "p2"},                   // 87.5%: above the re-arm line (80%)
			{pod: pod("p3", "a", "200m")}, // 92.5% again: no edge
			{uid: "p1"},                   // 5%: re-armed
			{pod: pod("p4", "a", "3500m"), crossed: "a"},
		}},
		{"a finished pod frees its requests", []step{
			{node: a},
			{pod: pod("p1", "a", "3700m"), crossed: "a"},
			{pod: func() *v1.Pod { p := pod("p1", "a", "3700m"); p.Status.Phase = v1.PodSucceeded; return p }()},
			{pod: pod("p2", "a", "3700m"), crossed: "a"},
		}},
		{"unbound pods count only once bound", []step{
			{node: a},
			{pod: pod("p1", "", "3700m")},
			{pod: pod("p1", "a", "3700m"), crossed: "a"},
		}},
		{"pods seen before their node: the node crosses when it turns usable", []step{
			{pod: pod("p1", "a", "3700m")},
			{node: notReady(a)},
			{node: a, crossed: "a"},
		}},
		{"a node that shrinks under its pods crosses", []step{
			{node: node("a", "8", nil)},
			{pod: pod("p1", "a", "3700m")},
			{node: a, crossed: "a"},
		}},
		{"a node without CPU is never above", []step{
			{node: node("a", "0", nil)},
			{pod: pod("p1", "a", "100m")},
		}},
		{"a forgotten node starts afresh", []step{
			{node: a},
			{pod: pod("p1", "a", "3700m"), crossed: "a"},
			{forget: "a"},
			{node: a, crossed: "a"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoads(90, 10, labels.Everything())
			var want, got []string
			for _, s := range tc.steps {
				want = append(want, s.crossed)
				var crossed string
				switch {
				case s.forget != "":
					l.forget(s.forget)
				case s.node != nil:
					if l.setNode(s.node.Name, s.node) {
						crossed = s.node.Name
					}
				case s.pod != nil:
					if n, up := l.setPod(s.pod.UID, s.pod); up {
						crossed = n
					}
				default:
					if n, up := l.setPod(pod(s.uid, "", "0").UID, nil); up {
						crossed = n
					}
				}
				got = append(got, crossed)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("crossings per step (-want +got):\n%s", diff)
			}
		})
	}
}
