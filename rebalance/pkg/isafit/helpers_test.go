package isafit

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Groups of the test cluster: IMFD fits an rv64imfd pod best, IMFDV next.
const (
	groupIMFD  = "g-imfd"
	groupIMFDV = "g-imfdv"
)

var testNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func node(name, group, cpu string, mod ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{isa.GroupLabel: group, v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
	for _, m := range mod {
		m(n)
	}
	return n
}

// imfdPod is an rv64imfd pod as the webhook admits it: tier terms IMFD 100,
// IMFDV 40, owned by ReplicaSet rs, 10 minutes old, requesting cpu.
func imfdPod(name, nodeName, cpu string, mod ...func(*v1.Pod)) *v1.Pod {
	ctl := true
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(testNow.Add(-10 * time.Minute)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: &ctl}},
		},
		Spec: v1.PodSpec{
			NodeName: nodeName,
			Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				tierTerm(100, groupIMFD), tierTerm(40, groupIMFDV),
			}}},
			Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	for _, m := range mod {
		m(p)
	}
	return p
}

func tierTerm(w int32, groups ...string) v1.PreferredSchedulingTerm {
	return v1.PreferredSchedulingTerm{Weight: w, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: isa.GroupLabel, Operator: v1.NodeSelectorOpIn, Values: groups},
	}}}
}

// podsOnFunc is a GetPodsAssignedToNodeFunc over a fixed list of pods.
func podsOnFunc(pods []*v1.Pod) podutil.GetPodsAssignedToNodeFunc {
	return func(nodeName string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		var out []*v1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == nodeName && (filter == nil || filter(p)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
}

// moveText is a move as "pod:from->to", for comparisons.
func moveText(ms []move) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.pod.Name+":"+m.from+"->"+m.to)
	}
	return out
}

// emuNode is an x86-64-v3 node that emulates rv64imfdv (the labeler's
// labels for it), whose group is in no native tier of the test pods.
func emuNode(t *testing.T, name, cpu string) *v1.Node {
	t.Helper()
	n := node(name, "", cpu)
	n.Labels = isa.NodeLabels(mustParse(t, "x86-64-v3"), []isa.ISA{mustParse(t, "rv64imfdv")})
	n.Labels[v1.LabelHostname] = name
	return n
}

// qemuPod is a pod as the webhook admits it with isa.qemu rv64imfdv: the
// emulation term at weight 100 and the native fallback tier IMFDV at 40.
func qemuPod(t *testing.T, name, nodeName, cpu string) *v1.Pod {
	t.Helper()
	var reqs []v1.NodeSelectorRequirement
	for _, r := range isa.Requirements(mustParse(t, "rv64imfdv"), true) {
		reqs = append(reqs, v1.NodeSelectorRequirement{Key: r.Key, Operator: v1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	return imfdPod(name, nodeName, cpu, func(p *v1.Pod) {
		p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{
			{Weight: 100, Preference: v1.NodeSelectorTerm{MatchExpressions: reqs}}, tierTerm(40, groupIMFDV),
		}
	})
}

func mustParse(t *testing.T, s string) isa.ISA {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}
