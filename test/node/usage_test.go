package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/test/framework"
	"github.com/isamatch/isamatch/test/node/cluster"
)

// MetricsServerAssetsEnv names the directory of hack/metrics-server.sh.
const MetricsServerAssetsEnv = "ISAMATCH_METRICS_SERVER_ASSETS"

const (
	// simulatedNode is a second, simulated Ready node: descheduler runs
	// no cycle on a cluster of one node. It runs no pods (tainted), and
	// metrics-server cannot reach it, so the rebalancer judges it by its
	// requests.
	simulatedNode = "isamatch-simulated"
	burnNamespace = "default"
	// burnRequest is what the burner requests; it uses about a core.
	burnRequest = "10m"
)

var _ = Describe("Measured load on the real node", Ordered, func() {
	var (
		rebalancer *rebalancecluster.Rebalancer
		dir        string
	)

	BeforeAll(func(ctx SpecContext) {
		assets := os.Getenv(MetricsServerAssetsEnv)
		if assets == "" {
			if framework.InCI() {
				Fail(MetricsServerAssetsEnv + " is not set: `make test` sets it (hack/metrics-server.sh)")
			}
			Skip(MetricsServerAssetsEnv + " is not set: `make test` sets it (hack/metrics-server.sh)")
		}
		dir = GinkgoT().TempDir()

		By("pushing metrics-server (hack/metrics-server.sh) and the CPU burner as images")
		msRef := reg.Host + "/isamatch-test/metrics-server:" + imageTag
		msDigest, err := cluster.PushBinary(ctx, filepath.Join(assets, "metrics-server"), "/metrics-server", msRef)
		Expect(err).NotTo(HaveOccurred())
		burnBin := filepath.Join(dir, "burn")
		run(ctx, filepath.Join(repoRoot, "test", "node", "testdata", "burn"), "go", "build", "-trimpath", "-o", burnBin, ".")
		burnRef := reg.Host + "/isamatch-test/burn:" + imageTag
		_, err = cluster.PushBinary(ctx, burnBin, "/burn", burnRef)
		Expect(err).NotTo(HaveOccurred())

		By("kubectl apply -k of config/components/metrics-server, pointed at the pushed image")
		ov := writeMetricsServerOverlay(dir, reg.Host+"/isamatch-test/metrics-server", msDigest.String())
		GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", ov))
		DeferCleanup(func(ctx SpecContext) { kubectlRun(ctx, "delete", "-k", ov, "--ignore-not-found", "--wait=false") })
		DeferCleanup(func(ctx SpecContext) {
			if CurrentSpecReport().Failed() {
				out, _ := exec.CommandContext(ctx, kubectl, "--kubeconfig="+cl.Kubeconfig, "-n", "kube-system", "logs", "deploy/metrics-server", "--tail=40").CombinedOutput()
				AddReportEntry("metrics-server log", string(out))
			}
		})
		// The burner starts while metrics-server does: its first samples
		// then already include it.
		By("a pod that requests " + burnRequest + " and burns a core")
		burn := testbed.MakePod("burn", burnNamespace).Image(burnRef).Label(isa.IgnoreLabel, "true").Obj()
		burn.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(burnRequest)}
		burn.Spec.NodeName = host.NodeName
		Expect(cl.Client.Create(ctx, burn)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, burn, client.GracePeriodSeconds(0)))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			g.Expect(nodeMetricsCPU(g, ctx, host.NodeName)).To(BeNumerically(">", 0))
		}).WithContext(ctx).WithTimeout(4*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "metrics-server serves NodeMetrics for %s", host.NodeName)

		By("a second, simulated Ready node whose Lease the spec renews")
		node := testbed.MakeNode(simulatedNode).CPU("2").Label("rebalance.test/simulated", "true").
			Taint(corev1.Taint{Key: "rebalance.test/simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}).Obj()
		// Removed whatever happens next: a node left behind would wait
		// for the labeler DaemonSet's pod the later specs count.
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, node))).To(Succeed())
		})
		Expect(testbed.CreateReadyNode(ctx, cl.Client, node)).To(Succeed())
		DeferCleanup(renewLease(cl.Client, simulatedNode))

		By("the rebalancer with the shipped WeightedLoad profile (usage: metrics), a cycle every 2s")
		bins, err := gobuild.Binaries(ctx, filepath.Join(repoRoot, "rebalance"), dir, gobuild.Options{}, "./cmd/rebalancer")
		Expect(err).NotTo(HaveOccurred())
		policy, err := rebalancecluster.ShippedProfilePolicy(repoRoot, "WeightedLoad", "", nil)
		Expect(err).NotTo(HaveOccurred())
		policyFile := filepath.Join(dir, "policy.yaml")
		Expect(os.WriteFile(policyFile, policy, 0o600)).To(Succeed())
		rebalancer, err = rebalancecluster.StartRebalancer(ctx, rebalancecluster.RebalancerOptions{
			Bin: bins[0], Kubeconfig: cl.Kubeconfig, Policy: policyFile, Name: "node", Dir: dir, Interval: 2 * time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry("rebalancer log", rebalancer.LogTail(60))
			}
			_ = rebalancer.Stop(10 * time.Second)
		})

		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(burn), burn)).To(Succeed())
			g.Expect(burn.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	}, NodeTimeout(12*time.Minute))

	It("sees the burner in the node's measured load while its requests stay small, and its load gauge agrees with the Metrics API", func(ctx SpecContext) {
		var alloc float64
		var node corev1.Node
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: host.NodeName}, &node)).To(Succeed())
		alloc = float64(node.Status.Allocatable.Cpu().MilliValue())

		// metrics-server measures the burner over its resolution (15s).
		var burnUse float64
		Eventually(func(g Gomega) {
			burnUse = podMetricsCPU(g, ctx, burnNamespace, "burn")
			g.Expect(burnUse).To(BeNumerically(">=", 200), "the burner's measured CPU (millicores)")
		}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "metrics-server measures the burner")

		// The gauge is the last cycle's (every 2s); metrics-server's values
		// change every 15s: they agree once a cycle has read the sample the
		// test reads, which it checks has not changed meanwhile. The node's
		// value of that sample includes the burner's.
		var gauge, measured, requested float64
		Eventually(func(g Gomega) {
			before := nodeMetricsCPU(g, ctx, host.NodeName)
			pod := podMetricsCPU(g, ctx, burnNamespace, "burn")
			v, found, err := rebalancer.Metric(ctx, "isamatch_rebalancer_node_load_ratio", map[string]string{"node": host.NodeName, "dimension": "cpu", "source": "metrics"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue(), "a CPU load gauge for %s measured by the Metrics API", host.NodeName)
			g.Expect(nodeMetricsCPU(g, ctx, host.NodeName)).To(Equal(before), "metrics-server's sample changed while reading")
			g.Expect(podMetricsCPU(g, ctx, burnNamespace, "burn")).To(Equal(pod), "metrics-server's sample changed while reading")
			gauge, measured, burnUse = v, before/alloc, pod
			g.Expect(gauge).To(BeNumerically("~", measured, 0.001))
			g.Expect(gauge).To(BeNumerically(">=", 0.95*burnUse/alloc), "the node's measured load includes what the burner uses")
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), "the rebalancer's gauge agrees with the Metrics API")
		requested = requestedCPU(ctx, host.NodeName) / alloc
		simulated, found, err := rebalancer.Metric(ctx, "isamatch_rebalancer_node_load_ratio", map[string]string{"node": simulatedNode, "dimension": "cpu", "source": "requests"})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "the node metrics-server cannot reach is judged by its requests")

		report := fmt.Sprintf("node %s (%.0fm allocatable): rebalancer's CPU load %.0f%% (Metrics API %.0f%%), of it the burner %.0fm (%.0f%%), all pods' requests %.0f%%; simulated node by requests %.0f%%",
			host.NodeName, alloc, 100*gauge, 100*measured, burnUse, 100*burnUse/alloc, 100*requested, 100*simulated)
		AddReportEntry("measured load", report)
		GinkgoWriter.Println(report)
		Expect(burnUse/alloc).To(BeNumerically(">", requested), "the burner alone uses more than every pod on the node requests")
	})
})

// writeMetricsServerOverlay writes an overlay of
// config/components/metrics-server whose image is ref@digest, and returns
// its directory.
func writeMetricsServerOverlay(dir, ref, digest string) string {
	GinkgoHelper()
	ov := filepath.Join(dir, "metrics-server")
	Expect(os.MkdirAll(ov, 0o755)).To(Succeed())
	rel, err := filepath.Rel(ov, filepath.Join(repoRoot, "config", "components", "metrics-server"))
	Expect(err).NotTo(HaveOccurred())
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
components:
  - %s
images:
  - name: registry.k8s.io/metrics-server/metrics-server
    newName: %s
    digest: %s
`, rel, ref, digest)
	Expect(os.WriteFile(filepath.Join(ov, "kustomization.yaml"), []byte(kustomization), 0o644)).To(Succeed())
	return ov
}

// nodeMetricsCPU is the node's CPU usage in millicores as the Metrics API
// reports it through the API server.
func nodeMetricsCPU(g Gomega, ctx context.Context, name string) float64 {
	cpu, err := rebalancecluster.NodeMetricsCPU(ctx, cl.Client, name)
	g.Expect(err).NotTo(HaveOccurred())
	return cpu
}

// podMetricsCPU is the pod's CPU usage in millicores as the Metrics API
// reports it.
func podMetricsCPU(g Gomega, ctx context.Context, namespace, name string) float64 {
	cpu, err := rebalancecluster.PodMetricsCPU(ctx, cl.Client, namespace, name)
	g.Expect(err).NotTo(HaveOccurred())
	return cpu
}

// requestedCPU is what the unfinished pods bound to node request, in
// millicores (containers only: the suite's pods have no init containers
// or overhead).
func requestedCPU(ctx context.Context, node string) float64 {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(cl.Client.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node})).To(Succeed())
	var sum float64
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			sum += float64(c.Resources.Requests.Cpu().MilliValue())
		}
	}
	return sum
}

// renewLease keeps the node's Lease in kube-node-lease fresh, as its
// kubelet would, so that the node lifecycle controller keeps it Ready,
// until the returned func is called.
func renewLease(c client.Client, node string) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			now := metav1.NewMicroTime(time.Now())
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease}}
			if err := c.Get(ctx, client.ObjectKeyFromObject(lease), lease); err == nil {
				lease.Spec.RenewTime = &now
				_ = c.Update(ctx, lease)
			} else {
				lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: new(node), LeaseDurationSeconds: new(int32(40)), RenewTime: &now}
				_ = c.Create(ctx, lease)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}
