package audit

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/audit/internal/audittest"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The shared fixtures, under the names these tests use.
var (
	nodes            = audittest.Nodes
	pod              = audittest.Pod
	annotate         = audittest.Annotate
	shippedSelectors = audittest.ShippedSelectors
)

func input(t *testing.T, scope Scope, pods ...*corev1.Pod) Input {
	t.Helper()
	ls := nodes(t)
	metas := map[string]*metav1.ObjectMeta{}
	for n, l := range ls {
		metas[n] = &metav1.ObjectMeta{Name: n, Labels: l}
	}
	return Input{Pods: slices.Values(pods), Nodes: metas, Inventory: inventory.NewStatic(ls).Snapshot(), Scope: scope}
}

const decided = `{"requiredNodes":1}`

func requireArch(arch string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}}}}}}
	}
}

func TestAudit(t *testing.T) {
	sigill := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 132}}}}
	}
	finished := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	ignored := func(p *corev1.Pod) { p.Labels = map[string]string{isa.IgnoreLabel: "true"} }
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string // reasons; nil: not misplaced
	}{
		{name: "decided, fits", pod: pod("ok", "app", "x86", annotate(isa.DecisionAnnotation, decided), requireArch("amd64"))},
		{name: "undecided", pod: pod("p", "app", "x86"), want: []string{ReasonUndecided}},
		{name: "undecided in a skipped namespace", pod: pod("p", "kube-system", "x86")},
		{name: "undecided, opted out", pod: pod("p", "app", "x86", ignored)},
		{name: "undecided, finished", pod: pod("p", "app", "x86", finished)},
		{name: "undecided on a node that is gone", pod: pod("p", "app", "gone")},
		{name: "request the node meets", pod: pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), annotate(isa.RequestAnnotation, "x86-64-v2"))},
		{name: "request the node lacks, undecided", pod: pod("p", "app", "x86", annotate(isa.RequestAnnotation, "rv64gc")),
			want: []string{ReasonUndecided, ReasonRequest}},
		{name: "request on an unlabelled node", pod: pod("p", "app", "bare", annotate(isa.DecisionAnnotation, decided), annotate(isa.BareRequestAnnotation, "x86-64-v2")),
			want: []string{ReasonRequest}},
		{name: "qemu request no node here meets", pod: pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), annotate(isa.QEMUAnnotation, "rv64gcv")),
			want: []string{ReasonRequest}},
		{name: "malformed request", pod: pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), annotate(isa.RequestAnnotation, "rv64gc_zbx")),
			want: []string{ReasonRequest}},
		{name: "decided, node labels changed since", pod: pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), requireArch("riscv64")),
			want: []string{ReasonAffinity}},
		{name: "died of SIGILL", pod: pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), sigill), want: []string{ReasonRuntime}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := Audit(input(t, Scope{SkipNamespaces: DefaultSkipNamespaces}, tc.pod))
			var got []string
			if len(fs) > 0 {
				got = fs[0].Reasons
				if len(fs[0].Details) != len(got) || fs[0].NodeISA == "" {
					t.Errorf("finding %+v: a detail per reason and the node's ISA wanted", fs[0])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuditKeys: the audit reads requests from the keys the webhook reads:
// a bare ARCH label that means something else is a malformed request by
// default and nothing with --bare-keys=false.
func TestAuditKeys(t *testing.T) {
	label := func(p *corev1.Pod) { p.Labels = map[string]string{isa.RequestLabel: "frontend"} }
	for _, tc := range []struct {
		keys engine.KeyOptions
		want []string
	}{{engine.KeyOptions{}, []string{ReasonRequest}}, {engine.KeyOptions{IgnoreBareKeys: true}, nil}} {
		in := input(t, Scope{SkipNamespaces: DefaultSkipNamespaces}, pod("p", "app", "x86", annotate(isa.DecisionAnnotation, decided), label))
		in.Keys = tc.keys
		var got []string
		if fs := Audit(in); len(fs) > 0 {
			got = fs[0].Reasons
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("IgnoreBareKeys=%v: reasons (-want +got):\n%s", tc.keys.IgnoreBareKeys, diff)
		}
	}
}

func TestScopeFromOptIn(t *testing.T) {
	sc, err := ScopeFrom(shippedSelectors(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := map[string]map[string]string{
		"on":  {corev1.LabelMetadataName: "on", isa.EnabledLabel: "true"},
		"off": {corev1.LabelMetadataName: "off"},
	}
	sc.NamespaceLabels = func(n string) (map[string]string, bool) { l, ok := ns[n]; return l, ok }
	fs := Audit(input(t, sc, pod("a", "on", "x86"), pod("b", "off", "x86"), pod("c", "isamatch-system", "x86")))
	if len(fs) != 1 || fs[0].Namespace != "on" {
		t.Errorf("findings %+v, want the undecided pod of the opted-in namespace only", fs)
	}
	if _, err := ScopeFrom(shippedSelectors(), "other", nil); err == nil {
		t.Error("ScopeFrom of a webhook the configuration lacks: no error")
	}
}
