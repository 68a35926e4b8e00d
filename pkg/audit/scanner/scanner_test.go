package scanner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// labelled returns the labels the labeler writes for an ISA.
func labelled(t *testing.T, s, arch string) map[string]string {
	t.Helper()
	native, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	l := isa.NodeLabels(native, nil)
	l[isa.KubeArchLabel] = arch
	return l
}

func nodes(t *testing.T) map[string]map[string]string {
	return map[string]map[string]string{
		"x86":  labelled(t, "x86-64-v3", "amd64"),
		"rv":   labelled(t, "rv64gc", "riscv64"),
		"bare": {isa.KubeArchLabel: "amd64"},
	}
}

// pod is a running pod on node.
func pod(name, ns, node string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := testbed.MakePod(name, ns).Image("reg/app:v1").Obj()
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	for _, o := range opts {
		o(p)
	}
	return p
}

func annotate(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

// shippedSelectors are config/webhook's selectors with the opt-in component.
func shippedSelectors() *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "isamatch"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.isa.isamatch.io", NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "isamatch-system"}},
				{Key: isa.IgnoreLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
				{Key: isa.EnabledLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}},
			}}}}}
}

type podList []*corev1.Pod

func (p podList) Pods() []*corev1.Pod { return p }
func (podList) HasSynced() bool       { return true }

func TestScanSetsGauges(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ls := nodes(t)
	var objs []runtime.Object
	for n, l := range ls {
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: l}})
	}
	now := time.Now()
	gated := testbed.MakePod("gated", "app").Image("reg/app:v1").Obj()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
	gated.CreationTimestamp = metav1.NewTime(now.Add(-5 * time.Minute))
	fresh := gated.DeepCopy()
	fresh.Name, fresh.CreationTimestamp = "fresh", metav1.NewTime(now)
	mwc := shippedSelectors()
	mwc.Webhooks[0].NamespaceSelector.MatchExpressions = mwc.Webhooks[0].NamespaceSelector.MatchExpressions[:2] // opt-out, the default
	objs = append(objs, gated, fresh, mwc, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Labels: map[string]string{isa.IgnoreLabel: "true"}}})
	c := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build()
	m := NewMetrics()
	s := &Scanner{
		Pods:      podList{pod("a", "app", "x86"), pod("b", "app", "rv", annotate(isa.RequestAnnotation, "x86-64")), pod("c", "quiet", "x86")},
		Inventory: inventory.NewStatic(ls), Cache: c, API: c, WebhookConfig: "isamatch", GateTimeout: time.Minute, Metrics: m,
	}
	if _, err := s.Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range audit.Reasons {
		got["misplaced "+r] = testutil.ToFloat64(m.Misplaced.WithLabelValues(r))
	}
	got["nodes amd64 labelled"] = testutil.ToFloat64(m.Nodes.WithLabelValues("amd64", "true"))
	got["nodes amd64 unlabelled"] = testutil.ToFloat64(m.Nodes.WithLabelValues("amd64", "false"))
	got["nodes riscv64 labelled"] = testutil.ToFloat64(m.Nodes.WithLabelValues("riscv64", "true"))
	got["groups"] = testutil.ToFloat64(m.Groups)
	got["overdue"] = testutil.ToFloat64(m.GatedOverdue)
	want := map[string]float64{
		"misplaced undecided": 2, "misplaced request": 1, "misplaced affinity": 0, "misplaced runtime": 0,
		"nodes amd64 labelled": 1, "nodes amd64 unlabelled": 1, "nodes riscv64 labelled": 1, "groups": 2, "overdue": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gauges (-want +got):\n%s", diff)
	}
}
