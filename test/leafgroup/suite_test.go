package leafgroup

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/leafcluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/test/framework"
)

func TestLeafGroup(t *testing.T) {
	RegisterFailHandler(Fail)
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "isamatch leaf-group placement suite")
}

var (
	cluster *democluster.Cluster
	// kueue is nil when ISAMATCH_KUEUE_ASSETS is unset outside CI: the
	// Kueue specs skip then.
	kueue *testbed.Kueue
)

// workloadAPIFlags turn on the Workload API (scheduling.k8s.io/v1beta1
// Workload and PodGroup), its gang scheduling and its topology-aware
// placement in kube-apiserver and kube-scheduler.
var workloadAPIFlags = democluster.Flags{
	APIServer: map[string][]string{
		"feature-gates":  {"GenericWorkload=true,TopologyAwareWorkloadScheduling=true"},
		"runtime-config": {"scheduling.k8s.io/v1beta1=true"},
	},
	Scheduler: []string{"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"},
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if _, err := testbed.AssetsDir(); err != nil {
		Fail(err.Error())
	}
	kueueAssets, err := testbed.KueueAssetsDir()
	if errors.Is(err, testbed.ErrKueueAssetsMissing) && framework.InCI() {
		Fail(err.Error() + " (CI=true makes a missing Kueue a failure)")
	}
	if err != nil && !errors.Is(err, testbed.ErrKueueAssetsMissing) {
		Fail(err.Error())
	}

	c, err := democluster.Start(ctx, democluster.Options{
		Nodes:           leafcluster.Nodes(),
		ExtraNodeLabels: leafcluster.LeafLabels,
		Flags:           workloadAPIFlags,
		Progress:        GinkgoWriter,
	})
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) && !framework.InCI() {
		Skip("needs Debian's docker-registry: apt-get install " + testbed.RegistryPackage + " (CI=true makes this a failure)")
	}
	Expect(err).NotTo(HaveOccurred())
	cluster = c
	DeferCleanup(func() { Expect(c.Stop()).To(Succeed()) })
	Expect(c.PrepareNamespace(ctx, namespace)).To(Succeed())

	if kueueAssets == "" {
		return
	}
	k, err := testbed.StartKueue(ctx, c.CP, testbed.KueueOptions{Assets: kueueAssets})
	Expect(err).NotTo(HaveOccurred())
	kueue = k
	DeferCleanup(func() { Expect(k.Stop()).To(Succeed()) })
	Expect(createKueueQueues(ctx, c.Client)).To(Succeed())
}, NodeTimeout(10*time.Minute))

var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || cluster == nil {
		return
	}
	AddReportEntry("logs", cluster.LogTails(40)+"\n--- kueue\n"+kueue.LogTail(60))
})

// requireKueue skips a Kueue spec when the suite runs without Kueue.
func requireKueue() {
	GinkgoHelper()
	if kueue == nil {
		Skip(testbed.ErrKueueAssetsMissing.Error())
	}
}

// eventually polls f every 250ms for up to timeout.
func eventually(ctx context.Context, timeout time.Duration, f any) AsyncAssertion {
	return Eventually(ctx, f).WithTimeout(timeout).WithPolling(250 * time.Millisecond)
}
