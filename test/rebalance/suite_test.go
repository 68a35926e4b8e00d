package rebalance

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/test/framework"
)

func TestRebalance(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "Rebalance suite")
}

const (
	// ns holds the suite's workloads.
	ns = "rebalance"
	// image is the riscv64 image every workload runs.
	image = "app/riscv"
)

// nodes are the simulated nodes: two best-fit nodes for rv64imfd tasks and
// two richer vector nodes, twice their size, one of each in each of two
// zones (the webhook then writes a zone constraint beside the group's).
var nodes = []rebalancecluster.Node{
	{Name: "imfd-1", ISA: "rv64imfd", CPU: "4", Zone: "zone-a"},
	{Name: "imfd-2", ISA: "rv64imfd", CPU: "4", Zone: "zone-b"},
	{Name: "imfdv-1", ISA: "rv64imfdv", CPU: "8", Zone: "zone-a"},
	{Name: "imfdv-2", ISA: "rv64imfdv", CPU: "8", Zone: "zone-b"},
}

var (
	cluster *rebalancecluster.Cluster
	cp      *testbed.ControlPlane
	reg     *testbed.Registry
	// c can watch; cp.Client cannot.
	c client.WithWatch
)

var _ = BeforeSuite(func(ctx SpecContext) {
	By("starting the rebalancer's cluster (internal/rebalancecluster)")
	cluster = framework.StartControllerCluster(ctx, rebalancecluster.Options{Nodes: nodes, Namespace: ns, Image: image})
	cp, reg, c = cluster.CP, cluster.Registry, cluster.Client
}, NodeTimeout(8*time.Minute))

var _ = AfterEach(func() { framework.ReportLogsOnFailure(cp, 40) })

// One ordered container: the load spec runs on the cluster the ISA-fit
// spec leaves (ginkgo shuffles top-level containers).
var _ = Describe("Rebalancer", Ordered, func() {
	It("ISAFit: moves rv64imfd replicas from vector nodes back to freed best-fit nodes, one disruption at a time, within a few cycles under the scheduler's defaults, and then stays put", isaFit, NodeTimeout(8*time.Minute))
	It("WeightedLoad: spreads a hot node's load onto joining nodes cycle after cycle until it settles, never moving restartPolicy Never pods", weightedLoad, NodeTimeout(5*time.Minute))
	It("Node join: a node joining starts a cycle at once, not at the next timer, and load moves to it; with the triggers off nothing moves", nodeJoin, NodeTimeout(5*time.Minute))
	It("Usage: through a real aggregated Metrics API, pods leave the node that uses the most although another requests more, and the balance index rises; with usage: requests the same scene moves the wrong pods", usageBalance, NodeTimeout(8*time.Minute))
	It("Tenants: a tenant loading a node or a node owner flipping its group label cannot make the rebalancer evict another tenant's pods beyond its budget, nor start more than one cycle per node per cooldown", tenants, NodeTimeout(5*time.Minute))
})

// podsOf lists the pods of ns labelled app=app.
func podsOf(ctx context.Context, app string) []corev1.Pod {
	GinkgoHelper()
	var list corev1.PodList
	Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
	return list.Items
}
