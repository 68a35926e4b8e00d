package scanner

import (
	"iter"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/internal/heaptest"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// generated yields n misplaced pods, each built when it is reached, and
// records the live heap once the last has been yielded: what the audit
// holds then is what it holds per pod, not what the source does.
type generated struct {
	n      int
	liveAt uint64
}

func (g *generated) Pods() iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		for k := range g.n {
			// Each pod asks for x86-64 on a RISC-V node, outside the
			// webhook's scope: one finding (request) each.
			p := pod("p-"+strconv.Itoa(k), "kube-system", "rv", annotate(isa.RequestAnnotation, "x86-64"))
			if !yield(p) {
				return
			}
		}
		g.liveAt = heaptest.Live()
	}
}

func (*generated) HasSynced() bool { return true }

// TestScanHoldsNoFindings audits 20,000 misplaced pods and checks that the
// heap holds almost nothing per pod once the last is judged: the gauges
// need counts, and collecting the findings (a few hundred bytes each)
// would make a large cluster's audit the webhook's peak of memory.
func TestScanHoldsNoFindings(t *testing.T) {
	const n = 20000
	ls := nodes(t)
	c := fake.NewClientBuilder().Build()
	for name, l := range ls {
		nd := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
		nd.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Node"})
		if err := c.Create(t.Context(), nd); err != nil {
			t.Fatal(err)
		}
	}
	src := &generated{n: n}
	s := &Scanner{Pods: src, Inventory: inventory.NewStatic(ls), Cache: c, API: c, WebhookConfig: "isamatch", Metrics: NewMetrics(), SkipNamespaces: []string{metav1.NamespaceSystem}}
	if _, err := s.Scan(t.Context()); err != nil { // warm: the matcher's memo, the metrics' series
		t.Fatal(err)
	}
	before := heaptest.Live()
	counts, err := s.Scan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if counts["request"] != n {
		t.Fatalf("findings by reason %v, want %d for request", counts, n)
	}
	perPod := (float64(src.liveAt) - float64(before)) / n
	t.Logf("heap held per audited pod at the end of the audit: %.1f bytes", perPod)
	if perPod > 32 {
		t.Errorf("the audit holds %.1f bytes per misplaced pod until it ends; want at most 32 (counts, not findings)", perPod)
	}
}
