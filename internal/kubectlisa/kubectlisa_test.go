package kubectlisa

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// labelledNode is a node the labeler has labelled with native ISA s and
// the emulated ISAs emu.
func labelledNode(t *testing.T, name, s string, emu ...string) *corev1.Node {
	t.Helper()
	native := mustParse(t, s)
	var emulated []isa.ISA
	for _, e := range emu {
		emulated = append(emulated, mustParse(t, e))
	}
	return testbed.MakeNode(name).Arch(string(native.Arch)).Labels(isa.NodeLabels(native, emulated)).Obj()
}

func mustParse(t *testing.T, s string) isa.ISA {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return i
}

// cluster is the nodes the tests share: three RISC-V machines, one x86
// machine that emulates riscv64, and one node not labelled yet.
func cluster(t *testing.T) []runtime.Object {
	t.Helper()
	unlabelled := testbed.MakeNode("new-arm").Arch("arm64").Obj()
	unlabelled.Annotations = map[string]string{isa.NativeISAAnnotation: "arm64+sve"}
	return []runtime.Object{
		labelledNode(t, "rv-gc", "rv64gc"),
		labelledNode(t, "rv-gcv", "rv64gcv"),
		labelledNode(t, "rv-gcvb", "rv64gcv_zba_zbb_zbs"),
		labelledNode(t, "x86-v3", "x86-64-v3", "rv64gc"),
		unlabelled,
	}
}

func TestNodesTable(t *testing.T) {
	rows, err := Nodes(t.Context(), fake.NewClientset(cluster(t)...), "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeNodes(&out, rows, true); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for line := range strings.Lines(out.String()) {
		got = append(got, strings.Fields(line))
	}
	row := func(name, arch, s, emulates string) []string {
		i := mustParse(t, s)
		return []string{name, arch, i.Compact(), isa.GroupID(i), emulates, "true"}
	}
	want := [][]string{
		{"NAME", "ARCH", "ISA", "GROUP", "EMULATES", "LABELLED"},
		{"new-arm", "arm64", "arm64+sve", "<none>", "<none>", "false"},
		row("rv-gc", "riscv64", "rv64gc", "<none>"),
		row("rv-gcv", "riscv64", "rv64gcv", "<none>"),
		row("rv-gcvb", "riscv64", "rv64gcv_zba_zbb_zbs", "<none>"),
		row("x86-v3", "amd64", "x86-64-v3", "riscv64"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes table (-want +got):\n%s", diff)
	}
}

func TestCheckRanksLikeTheWebhook(t *testing.T) {
	tests := []struct {
		name    string
		request string
		nodes   []string // best first
		tiers   []int
	}{
		{name: "exact fit first", request: "rv64gc", nodes: []string{"rv-gc", "rv-gcv", "rv-gcvb"}, tiers: []int{1, 2, 3}},
		{name: "vector only", request: "rv64gcv", nodes: []string{"rv-gcv", "rv-gcvb"}, tiers: []int{1, 2}},
		{name: "alternatives across arches", request: "rv64gcv_zba | x86-64-v3", nodes: []string{"x86-v3", "rv-gcvb"}, tiers: []int{1, 1}},
		{name: "nothing fits", request: "arm64+sve2", nodes: []string{}, tiers: []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(t.Context(), fake.NewClientset(cluster(t)...), tc.request)
			if err != nil {
				t.Fatal(err)
			}
			nodes, tiers := []string{}, []int{}
			for _, r := range res.Nodes {
				nodes, tiers = append(nodes, r.Node), append(tiers, r.Tier)
			}
			if diff := cmp.Diff(tc.nodes, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tiers, tiers); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefusesMalformedRequest(t *testing.T) {
	_, err := Check(t.Context(), fake.NewClientset(cluster(t)...), "rv64gc_zbx")
	if err == nil || !strings.Contains(err.Error(), `"rv64gc_zbx"`) {
		t.Errorf("err = %v, want one naming the request", err)
	}
}

// decidedPod is a pod as the webhook leaves it: decided by mutate's
// Matcher against the same nodes, placed on node.
func decidedPod(t *testing.T, objs []runtime.Object, node string) *corev1.Pod {
	t.Helper()
	labels := map[string]map[string]string{}
	for _, o := range objs {
		n := o.(*corev1.Node)
		labels[n.Name] = n.Labels
	}
	req, err := isa.ParseRequest("rv64gc")
	if err != nil {
		t.Fatal(err)
	}
	in := engine.Input{Request: &req, RequestFrom: "annotation " + isa.BareRequestAnnotation, RequestText: "rv64gc",
		Images: []engine.ImageInfo{{Ref: "registry.example/app:v1", Platforms: []engine.Platform{{OS: "linux", Architecture: "riscv64"}, {OS: "linux", Architecture: "amd64"}}}}}
	d := engine.NewMatcher().Decide(in, inventory.NewStatic(labels).Snapshot())
	pod := testbed.MakePod("app", "default").Image("registry.example/app:v1").Annotation(isa.BareRequestAnnotation, "rv64gc").
		Annotation(isa.DecisionAnnotation, d.Counts.Encode()).Obj()
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution:  &corev1.NodeSelector{NodeSelectorTerms: d.Required},
		PreferredDuringSchedulingIgnoredDuringExecution: d.Preferred,
	}}
	pod.Spec.NodeName = node
	return pod
}

func TestExplain(t *testing.T) {
	objs := cluster(t)
	decided := decidedPod(t, objs, "rv-gcv")
	plain := testbed.MakePod("plain", "default").Image("busybox").Obj()
	plain.Spec.NodeName = "x86-v3"
	type summary struct {
		Decided       bool
		RequiredNodes int
		Request       *Asked
		Needs         string
		Images        []string
		Tiers         [][]string // nodes of each tier
		Node          string
		NodeTier      int
		Required      int
		Satisfies     bool
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want summary
	}{
		{name: "decided pod on its second tier", pod: decided, want: summary{
			Decided: true, RequiredNodes: 3, Request: &Asked{Text: "rv64gc", From: "annotation " + isa.BareRequestAnnotation}, Needs: "rv64gc",
			Images: []string{"registry.example/app:v1"}, Tiers: [][]string{{"rv-gc"}, {"rv-gcv"}, {"rv-gcvb"}}, Node: "rv-gcv", NodeTier: 2, Required: 1, Satisfies: true,
		}},
		{name: "pod isamatch did not decide", pod: plain, want: summary{
			Images: []string{"busybox"}, Tiers: [][]string{}, Node: "x86-v3", Satisfies: true,
		}},
	}
	var nodes []corev1.Node
	for _, o := range objs {
		nodes = append(nodes, *o.(*corev1.Node))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := explain(tc.pod, nodes, engine.KeyOptions{})
			got := summary{Decided: ex.Decided, Request: ex.Request, Needs: ex.RequestNeeds, Images: ex.Images, Tiers: [][]string{}, Node: ex.Node, NodeTier: ex.NodeTier,
				Required: len(ex.Required), Satisfies: ex.NodeSatisfies}
			if ex.Counts != nil {
				got.RequiredNodes = ex.Counts.RequiredNodes
			}
			for _, tier := range ex.Tiers {
				got.Tiers = append(got.Tiers, tier.Nodes)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("explain (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainTextSaysNotDecided(t *testing.T) {
	plain := testbed.MakePod("plain", "default").Image("busybox").Obj()
	var out bytes.Buffer
	if err := writeExplanation(&out, explain(plain, nil, engine.KeyOptions{}), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not decided by isamatch") {
		t.Errorf("explain of an undecided pod does not say so:\n%s", out.String())
	}
}

func TestExplainWarnsWhenTheNodeNoLongerFits(t *testing.T) {
	objs := cluster(t)
	pod := decidedPod(t, objs, "x86-v3") // requires rv64gc natively
	var nodes []corev1.Node
	for _, o := range objs {
		nodes = append(nodes, *o.(*corev1.Node))
	}
	ex := explain(pod, nodes, engine.KeyOptions{})
	var out bytes.Buffer
	if err := writeExplanation(&out, ex, false); err != nil {
		t.Fatal(err)
	}
	if ex.NodeSatisfies || !strings.Contains(out.String(), "no longer satisfies") {
		t.Errorf("a pod on a node outside its required affinity: NodeSatisfies %v, text:\n%s", ex.NodeSatisfies, out.String())
	}
}

func TestPodName(t *testing.T) {
	tests := []struct {
		ref, want string
		bad       bool
	}{
		{ref: "app", want: "app"},
		{ref: "pod/app", want: "app"},
		{ref: "pods/app", want: "app"},
		{ref: "po/app", want: "app"},
		{ref: "node/x", bad: true},
		{ref: "pod/", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := podName(tc.ref)
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("podName(%q) = %q, %v; want %q, error %v", tc.ref, got, err, tc.want, tc.bad)
			}
		})
	}
}

func TestCleanBoundsUntrustedValues(t *testing.T) {
	if got, want := clean("a\x1b[31mb"+strings.Repeat("x", 200), 8), "a?[31mbx…"; got != want {
		t.Errorf("clean = %q, want %q", got, want)
	}
}

// TestExplainKeys: explain reads a bare-key request only as the webhook
// does, so with --bare-keys=false a pod's isa.request is not shown as one.
func TestExplainKeys(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns",
		Annotations: map[string]string{isa.BareRequestAnnotation: "rv64gc"}}}
	if ex := explain(pod, nil, engine.KeyOptions{}); ex.Request == nil || ex.Request.Text != "rv64gc" {
		t.Errorf("bare keys read: request = %+v, want rv64gc", ex.Request)
	}
	if ex := explain(pod, nil, engine.KeyOptions{IgnoreBareKeys: true}); ex.Request != nil {
		t.Errorf("bare keys ignored: request = %+v, want none", ex.Request)
	}
}
