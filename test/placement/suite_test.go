package placement

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/test/framework"
)

func TestPlacement(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "Placement suite")
}

const (
	// ns holds the suite's workloads.
	ns = "placement"
	// image is a multi-arch image: amd64, arm64 and riscv64.
	image = "app/multi"
)

// nodes is a mixed cluster in three zones, as a managed cluster's are: for
// every workload the best-fit nodes have room for all of its replicas, and
// a richer, larger, empty node of the same architecture is there to draw
// them away. The rv64gc_zba_zbb_zbs group has two nodes in each zone.
var nodes = []rebalancecluster.Node{
	{Name: "x86-v2-1", ISA: "x86-64-v2", CPU: "4", Zone: "zone-a"},
	{Name: "x86-v2-2", ISA: "x86-64-v2", CPU: "4", Zone: "zone-b"},
	{Name: "x86-v4-1", ISA: "x86-64-v4", CPU: "16", Zone: "zone-c"},
	{Name: "arm-1", ISA: "arm64", CPU: "4", Zone: "zone-a"},
	{Name: "arm-2", ISA: "arm64", CPU: "4", Zone: "zone-b"},
	{Name: "arm-sve-1", ISA: "arm64+sve", CPU: "16", Zone: "zone-c"},
	{Name: "rv-gc-1", ISA: "rv64gc", CPU: "4", Zone: "zone-a"},
	{Name: "rv-gc-2", ISA: "rv64gc", CPU: "4", Zone: "zone-b"},
	{Name: "rv-gc-3", ISA: "rv64gc", CPU: "4", Zone: "zone-c"},
	{Name: "rv-gcv-1", ISA: "rv64gcv", CPU: "4", Zone: "zone-a"},
	{Name: "rv-gcv-2", ISA: "rv64gcv", CPU: "4", Zone: "zone-b"},
	{Name: "rv-zb-a1", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-a"},
	{Name: "rv-zb-a2", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-a"},
	{Name: "rv-zb-b1", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-b"},
	{Name: "rv-zb-b2", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-b"},
	{Name: "rv-zb-c1", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-c"},
	{Name: "rv-zb-c2", ISA: "rv64gc_zba_zbb_zbs", CPU: "4", Zone: "zone-c"},
	{Name: "rva23-1", ISA: "rva23u64", CPU: "16", Zone: "zone-c"},
}

var cluster *rebalancecluster.Cluster

var _ = BeforeSuite(func(ctx SpecContext) {
	By("starting a control plane with kube-controller-manager and the scheduler's default configuration")
	cluster = framework.StartControllerCluster(ctx, rebalancecluster.Options{
		Nodes: nodes, Namespace: ns, Image: image,
		Platforms: []testbed.Platform{{Arch: "amd64"}, {Arch: "arm64"}, {Arch: "riscv64"}},
	})
}, NodeTimeout(8*time.Minute))

var _ = AfterEach(func() { framework.ReportLogsOnFailure(cluster.CP, 40) })
