package scanner

import (
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/audit/internal/audittest"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The shared fixtures, under the names these tests use.
var (
	nodes            = audittest.Nodes
	pod              = audittest.Pod
	annotate         = audittest.Annotate
	shippedSelectors = audittest.ShippedSelectors
)

type podList []*corev1.Pod

func (p podList) Pods() iter.Seq[*corev1.Pod] { return slices.Values(p) }
func (podList) HasSynced() bool               { return true }

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
