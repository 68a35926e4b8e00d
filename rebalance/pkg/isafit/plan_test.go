package isafit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestPlanMoves(t *testing.T) {
	imfd := node("imfd", groupIMFD, "2")
	imfdv := node("imfdv", groupIMFDV, "8")
	tainted := node("imfd", groupIMFD, "2", func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
	})
	cordoned := node("imfd", groupIMFD, "2", func(n *v1.Node) { n.Spec.Unschedulable = true })
	emu := emuNode(t, "emu", "8")
	onlyIMFDV := func(p *v1.Pod) {
		p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: isa.GroupLabel, Operator: v1.NodeSelectorOpIn, Values: []string{groupIMFDV}}},
		}}}
	}
	for _, tc := range []struct {
		name    string
		nodes   []*v1.Node
		pods    []*v1.Pod
		minGain int32
		want    []string
	}{{
		name:  "the best tier has room",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1")},
		want:  []string{"a:imfdv->imfd"},
	}, {
		name:  "a restartPolicy Never pod is never moved",
		nodes: []*v1.Node{imfd, imfdv},
		pods: []*v1.Pod{func() *v1.Pod {
			p := imfdPod("a", "imfdv", "1")
			p.Spec.RestartPolicy = v1.RestartPolicyNever
			return p
		}()},
	}, {
		name:  "the best tier is full with the pods already there",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1"), imfdPod("filler", "imfd", "1500m")},
	}, {
		name:  "the pod is on its best tier",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfd", "1")},
	}, {
		name:  "the better node has a taint the pod does not tolerate",
		nodes: []*v1.Node{tainted, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1")},
	}, {
		name:  "the better node is cordoned",
		nodes: []*v1.Node{cordoned, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1")},
	}, {
		name:  "the pod's required affinity excludes the better node",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1", onlyIMFDV)},
	}, {
		name:  "the pod is younger than the cool-down",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1", func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(testNow.Add(-time.Minute)) })},
	}, {
		name:  "a larger group of the same tier is no reason to move",
		nodes: []*v1.Node{imfd, imfdv},
		pods: []*v1.Pod{imfdPod("a", "imfdv", "1", func(p *v1.Pod) {
			p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{tierTerm(100, groupIMFD), tierTerm(95, groupIMFDV)}
		})},
	}, {
		name:    "the gain is compared with minWeightGain",
		nodes:   []*v1.Node{imfd, imfdv},
		minGain: 61,
		pods:    []*v1.Pod{imfdPod("a", "imfdv", "1")},
	}, {
		name:  "a pod without isamatch tier terms is left alone",
		nodes: []*v1.Node{imfd, imfdv},
		pods: []*v1.Pod{imfdPod("a", "imfdv", "1", func(p *v1.Pod) {
			p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{{Weight: 100, Preference: v1.NodeSelectorTerm{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: isa.GroupLabel, Operator: v1.NodeSelectorOpIn, Values: []string{groupIMFD}}, {Key: "zone", Operator: v1.NodeSelectorOpExists}},
			}}}
		})},
	}, {
		name:  "a terminating pod is not moved again",
		nodes: []*v1.Node{imfd, imfdv},
		pods:  []*v1.Pod{imfdPod("a", "imfdv", "1", func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: testNow} })},
	}, {
		name:  "largest gain first, then node and name",
		nodes: []*v1.Node{node("imfd", groupIMFD, "8"), imfdv, node("rich", "g-rich", "8")},
		pods: []*v1.Pod{
			imfdPod("b", "imfdv", "1"),
			imfdPod("a", "imfdv", "1"),
			imfdPod("c", "rich", "1", func(p *v1.Pod) {
				p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, tierTerm(16, "g-rich"))
			}),
		},
		want: []string{"c:rich->imfd", "a:imfdv->imfd", "b:imfdv->imfd"},
	}, {
		name:  "an isa.qemu pod on an emulating node stays although its native fallback tier has room",
		nodes: []*v1.Node{imfdv, emu},
		pods:  []*v1.Pod{qemuPod(t, "q", "emu", "1")},
	}, {
		name:  "an isa.qemu pod on its native fallback tier moves to an emulating node with room",
		nodes: []*v1.Node{imfdv, emu},
		pods:  []*v1.Pod{qemuPod(t, "q", "imfdv", "1")},
		want:  []string{"q:imfdv->emu"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			gain := tc.minGain
			if gain == 0 {
				gain = DefaultMinWeightGain
			}
			moves, _, err := planMoves(t.Context(), tc.nodes, podsOnFunc(tc.pods), planOptions{minAge: DefaultMinPodAge, minGain: gain, now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, moveText(moves)); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTierWeight(t *testing.T) {
	terms := []v1.PreferredSchedulingTerm{tierTerm(100, "a", "b"), tierTerm(40, "c")}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   int32
	}{
		{"first tier", map[string]string{isa.GroupLabel: "b"}, 100},
		{"second tier", map[string]string{isa.GroupLabel: "c"}, 40},
		{"no tier", map[string]string{isa.GroupLabel: "d"}, 0},
		{"not labelled yet", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if got := tierWeight(terms, n); got != tc.want {
				t.Errorf("tierWeight = %d, want %d", got, tc.want)
			}
		})
	}
}

// A cycle that runs while the replicas are just under minPodAge moves
// nothing and says so; the same replicas a moment later are moved.
func TestPlanMovesYoungPods(t *testing.T) {
	imfd, imfdv := node("imfd", "g-imfd", "4"), node("imfdv", "g-imfdv", "8")
	young := func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(testNow.Add(-DefaultMinPodAge + time.Second)) }
	pods := []*v1.Pod{imfdPod("a", "imfdv", "1", young), imfdPod("b", "imfdv", "1", young)}
	moves, st, err := planMoves(t.Context(), []*v1.Node{imfd, imfdv}, podsOnFunc(pods), planOptions{minAge: DefaultMinPodAge, minGain: DefaultMinWeightGain, now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) != 0 || st.young != 2 || st.tiered != 0 {
		t.Errorf("a second under minPodAge: moves %v, stats %+v; want none, 2 young", moveText(moves), st)
	}
	moves, st, err = planMoves(t.Context(), []*v1.Node{imfd, imfdv}, podsOnFunc(pods), planOptions{minAge: DefaultMinPodAge, minGain: DefaultMinWeightGain, now: testNow.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a:imfdv->imfd", "b:imfdv->imfd"}, moveText(moves)); diff != "" || st.young != 0 || st.tiered != 2 {
		t.Errorf("at minPodAge: moves (-want +got):\n%s; stats %+v", diff, st)
	}
}
