package testbed

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestMakeNode(t *testing.T) {
	cases := []struct {
		name string
		got  *corev1.Node
		want *corev1.Node
	}{
		{
			name: "defaults",
			got:  MakeNode("n0").Obj(),
			want: wantNode("n0", "amd64", "4", "16Gi", 110, nil, nil),
		},
		{
			name: "riscv64 with labels and taint",
			got: MakeNode("node1").Arch("riscv64").CPU("8").Memory("32Gi").Pods(20).
				Label("a", "b").Labels(map[string]string{"c": "d"}).
				Taint(corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}).Obj(),
			want: wantNode("node1", "riscv64", "8", "32Gi", 20, map[string]string{"a": "b", "c": "d"},
				[]corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("node (-want +got):\n%s", diff)
			}
		})
	}
}

func wantNode(name, arch, cpu, mem string, pods int64, labels map[string]string, taints []corev1.Taint) *corev1.Node {
	l := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		isa.KubeArchLabel:        arch,
	}
	for k, v := range labels {
		l[k] = v
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux", Architecture: arch, KubeletVersion: SimulatedKubeletVersion,
			},
		},
	}
}

func TestMakePod(t *testing.T) {
	req := func(k string, op corev1.NodeSelectorOperator, v ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: k, Operator: op, Values: v}
	}
	cases := []struct {
		name string
		got  *corev1.Pod
		want func(p *corev1.Pod)
	}{
		{
			name: "defaults",
			got:  MakePod("p", "ns").Obj(),
			want: func(*corev1.Pod) {},
		},
		{
			name: "image, requests, metadata, selector",
			got: MakePod("p", "ns").Image("reg/app:1").Request("500m", "1Gi").Limit("", "2Gi").
				Annotation(isa.BareRequestAnnotation, "rv64gcv").Label(isa.RequestLabel, "riscv64").NodeSelector(isa.KubeArchLabel, "riscv64").Obj(),
			want: func(p *corev1.Pod) {
				p.Annotations = map[string]string{isa.BareRequestAnnotation: "rv64gcv"}
				p.Labels = map[string]string{isa.RequestLabel: "riscv64"}
				p.Spec.NodeSelector = map[string]string{isa.KubeArchLabel: "riscv64"}
				p.Spec.Containers[0].Image = "reg/app:1"
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
				}
			},
		},
		{
			name: "NodeAffinity is ANDed into every term, NodeAffinityTerm ORs",
			got: MakePod("p", "ns").
				NodeAffinityTerm(req("a", corev1.NodeSelectorOpIn, "1")).
				NodeAffinityTerm(req("b", corev1.NodeSelectorOpExists)).
				NodeAffinity("c", corev1.NodeSelectorOpNotIn, "x").
				PreferredNodeAffinity(5, req("d", corev1.NodeSelectorOpGt, "2")).Obj(),
			want: func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{req("a", corev1.NodeSelectorOpIn, "1"), req("c", corev1.NodeSelectorOpNotIn, "x")}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{req("b", corev1.NodeSelectorOpExists), req("c", corev1.NodeSelectorOpNotIn, "x")}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
						{Weight: 5, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("d", corev1.NodeSelectorOpGt, "2")}}},
					},
				}}
			},
		},
		{
			name: "NodeAffinity alone creates one term",
			got:  MakePod("p", "ns").NodeAffinity("c", corev1.NodeSelectorOpIn, "x").Obj(),
			want: func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{req("c", corev1.NodeSelectorOpIn, "x")}},
					}},
				}}
			},
		},
		{
			name: "containers, pull secret, toleration, scheduler",
			got: MakePod("p", "ns").Container("side", "reg/side:1").InitContainer("init", "reg/init:1").
				ImagePullSecret("pull").Toleration(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}).
				SchedulerName("other").Obj(),
			want: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "reg/side:1"})
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "reg/init:1"}}
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
				p.Spec.SchedulerName = "other"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: DefaultPodImage}}},
			}
			tc.want(want)
			if diff := cmp.Diff(want, tc.got); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjReturnsCopies(t *testing.T) {
	w := MakePod("p", "ns").Label("a", "1")
	first := w.Obj()
	first.Labels["a"] = "changed"
	if got := w.Obj().Labels["a"]; got != "1" {
		t.Errorf("pod builder shares maps with Obj(): label a = %q, want %q", got, "1")
	}
	nw := MakeNode("n").CPU("2")
	n := nw.Obj()
	n.Labels["x"] = "y"
	n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("64")
	again := nw.Obj()
	if _, ok := again.Labels["x"]; ok {
		t.Errorf("node builder shares labels with Obj()")
	}
	if got := again.Status.Allocatable.Cpu().String(); got != "2" {
		t.Errorf("allocatable cpu = %s, want 2", got)
	}
}

func TestNodeIsReady(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	cases := []struct {
		name   string
		taints []corev1.Taint
		conds  []corev1.NodeCondition
		want   bool
	}{
		{name: "no conditions", want: false},
		{name: "ready", conds: []corev1.NodeCondition{ready}, want: true},
		{name: "ready but not-ready taint", conds: []corev1.NodeCondition{ready},
			taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}, want: false},
		{name: "ready with user taint", conds: []corev1.NodeCondition{ready},
			taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}, want: true},
		{name: "not ready", conds: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := MakeNode("n").Obj()
			n.Spec.Taints = tc.taints
			n.Status.Conditions = tc.conds
			if got := NodeIsReady(n); got != tc.want {
				t.Errorf("NodeIsReady = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDescribePending(t *testing.T) {
	unsched := MakePod("b", "ns").Obj()
	unsched.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/2 nodes are available",
	}}
	fresh := MakePod("a", "ns").Obj()
	bound := MakePod("c", "ns").Obj()
	bound.Spec.NodeName = "n1"
	cases := []struct {
		name  string
		pod   *corev1.Pod
		sched bool
		unsch bool
	}{
		{name: "fresh", pod: fresh},
		{name: "unschedulable", pod: unsched, unsch: true},
		{name: "bound", pod: bound, sched: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsScheduled(tc.pod); got != tc.sched {
				t.Errorf("IsScheduled = %v, want %v", got, tc.sched)
			}
			if got := IsUnschedulable(tc.pod); got != tc.unsch {
				t.Errorf("IsUnschedulable = %v, want %v", got, tc.unsch)
			}
		})
	}
	got := describePending([]*corev1.Pod{unsched, fresh})
	want := "ns/a (not tried yet); ns/b (Unschedulable: 0/2 nodes are available)"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("describePending (-want +got):\n%s", diff)
	}
	var many []*corev1.Pod
	for i := range 12 {
		many = append(many, MakePod(string(rune('a'+i)), "ns").Obj())
	}
	if got := describePending(many); !strings.HasSuffix(got, "; and 2 more") {
		t.Errorf("describePending of 12 pods = %q, want it to end with %q", got, "; and 2 more")
	}
}
