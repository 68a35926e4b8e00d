package rebalance

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/test/framework"
)

func TestRebalance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Rebalance suite")
}

// nodeAssetsEnv names the directory of `hack/controlplane.sh node`, which
// holds kube-controller-manager.
const nodeAssetsEnv = "ISAMATCH_NODE_ASSETS"

const (
	// ns holds the suite's workloads.
	ns = "rebalance"
	// image is the riscv64 image every workload runs.
	image = "app/riscv"
	// pullSecret is the registry's secret in ns.
	pullSecret = "registry"
)

// nodes are the simulated nodes: two best-fit nodes for rv64imfd tasks and
// two richer vector nodes, twice their size.
var nodes = []struct {
	name, isa, cpu string
}{
	{"imfd-1", "rv64imfd", "4"},
	{"imfd-2", "rv64imfd", "4"},
	{"imfdv-1", "rv64imfdv", "8"},
	{"imfdv-2", "rv64imfdv", "8"},
}

var (
	cp  *testbed.ControlPlane
	reg *testbed.Registry
	// c can watch; cp.Client cannot.
	c client.WithWatch
	// rebalancerBin is rebalance/cmd/rebalancer; repoRoot the module root;
	// work the suite's directory (logs, policies).
	rebalancerBin, repoRoot, work string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	nodeAssets := os.Getenv(nodeAssetsEnv)
	if nodeAssets == "" {
		if framework.InCI() {
			Fail(nodeAssetsEnv + " is not set: run `make test`, or export ISAMATCH_NODE_ASSETS=\"$(hack/controlplane.sh node)\"")
		}
		Skip(nodeAssetsEnv + " is not set (kube-controller-manager): `make test` sets it")
	}
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	work = GinkgoT().TempDir()

	By("building cmd/webhook and the rebalancer (rebalance/, a module of its own)")
	webhookBins, err := testbed.BuildBinaries(ctx, repoRoot, work, testbed.BuildOptions{}, "./cmd/webhook")
	Expect(err).NotTo(HaveOccurred())
	rebalancerBins, err := testbed.BuildBinaries(ctx, filepath.Join(repoRoot, "rebalance"), work, testbed.BuildOptions{}, "./cmd/rebalancer")
	Expect(err).NotTo(HaveOccurred())
	rebalancerBin = rebalancerBins[0]

	By("starting docker-registry and pushing a riscv64 image")
	reg = framework.RequireRegistry(ctx, testbed.RegistryOptions{})
	_, err = testbed.PushImage(ctx, reg, image, "v1", testbed.Platform{Arch: "riscv64"})
	Expect(err).NotTo(HaveOccurred())

	By("starting kube-apiserver, etcd and kube-scheduler with the shipped MutatingWebhookConfiguration")
	hook, err := testbed.EnvtestWebhookConfiguration(repoRoot)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(filepath.Join(work, "controlplane"), 0o755)).To(Succeed())
	cp, err = testbed.Start(ctx, testbed.Options{
		Scheduler:       true,
		SchedulerConfig: schedulerConfig,
		Dir:             filepath.Join(work, "controlplane"),
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			LocalServingHost: "127.0.0.1",
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hook},
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cp.Stop()).To(Succeed()) })
	c, err = client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme})
	Expect(err).NotTo(HaveOccurred())

	By("starting kube-controller-manager")
	kcm := startControllerManager(ctx, filepath.Join(nodeAssets, "kube-controller-manager"))
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			AddReportEntry("kube-controller-manager log", kcm.LogTail(40))
		}
		Expect(kcm.Stop(10 * time.Second)).To(Succeed())
	})

	By("creating Ready nodes with the labeler's labels")
	for _, n := range nodes {
		i, err := isa.Parse(n.isa)
		Expect(err).NotTo(HaveOccurred(), "parse node ISA %q", n.isa)
		node := testbed.MakeNode(n.name).Arch(string(i.Arch)).CPU(n.cpu).Labels(isa.NodeLabels(i, nil)).Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
	}

	By("starting the webhook binary")
	w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
		Bin: webhookBins[0], CP: cp, RegistryCA: reg.CAFile, Log: filepath.Join(work, "webhook.log"),
		ExtraArgs: []string{"--allow-registry=" + reg.Host},
	})
	if w.Process != nil {
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry("webhook log", w.Process.LogTail(40))
			}
			Expect(w.Process.Stop(10 * time.Second)).To(Succeed())
		})
	}
	Expect(err).NotTo(HaveOccurred(), "the webhook never became ready")
	Expect(democluster.SetUpNamespace(ctx, cp.Client, ns, nil, pullSecret, reg.DockerConfigJSON())).To(Succeed())
	last, err := democluster.WaitDecisionCount(ctx, 250*time.Millisecond, time.Minute, len(nodes), func(ctx context.Context) (map[string]string, error) {
		pod := testbed.MakePod("probe", ns).Image(reg.Ref(image, "v1")).Annotation(isa.RequestAnnotation, "rv64imfd").Obj()
		if err := cp.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			return nil, err
		}
		return pod.Annotations, nil
	})
	Expect(err).NotTo(HaveOccurred(), "the webhook's inventory never counted all %d nodes; last decision: %s", len(nodes), last)

	By("playing the kubelets' part")
	kctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		simulateKubelets(kctx, cp.Client, ns)
	}()
	DeferCleanup(func() { stop(); <-done })
}, NodeTimeout(8*time.Minute))

// schedulerConfig is testbed.DefaultSchedulerConfig without the system
// default topology spread. That default (pods of one ReplicaSet spread over
// hostnames, ScheduleAnyway) scores up to 200 points, more than the 120
// between the first two isamatch tiers: as the vector nodes empty, the
// scheduler would send the replacements of moved pods back to them, and
// ISAFit, which checks that a better node has room but not how the
// scheduler will score it, would have evicted them in vain (README,
// "Rebalancing", limits).
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "{{KUBECONFIG}}"
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: PodTopologySpread
        args:
          defaultingType: List
          defaultConstraints: []
`

var _ = AfterEach(func() { framework.ReportLogsOnFailure(cp, 40) })

// One ordered container: the load spec runs on the cluster the ISA-fit
// spec leaves (ginkgo shuffles top-level containers).
var _ = Describe("Rebalancer", Ordered, func() {
	It("ISAFit: moves rv64imfd replicas from vector nodes back to freed best-fit nodes in one cycle, one disruption at a time, and then stays put", isaFit, NodeTimeout(4*time.Minute))
	It("WeightedLoad: spreads a hot node's load onto joining nodes cycle after cycle until it settles, never moving restartPolicy Never pods", weightedLoad, NodeTimeout(5*time.Minute))
})

// startControllerManager runs kube-controller-manager as an admin with the
// controllers the suite needs: Deployments, ReplicaSets and Jobs recreate
// evicted pods, the disruption controller keeps PodDisruptionBudgets' status that
// the Eviction API enforces. Node lifecycle is left out: the simulated
// nodes post no heartbeats and would turn NotReady.
func startControllerManager(ctx context.Context, bin string) *testbed.Process {
	GinkgoHelper()
	var kcm *testbed.Process
	err := testbed.StartOnFreePorts(1, func(ports []int) error {
		p, err := testbed.StartProcess("kube-controller-manager", bin, []string{
			"--kubeconfig=" + cp.KubeconfigPath,
			"--authentication-kubeconfig=" + cp.KubeconfigPath,
			"--authorization-kubeconfig=" + cp.KubeconfigPath,
			"--controllers=deployment-controller,replicaset-controller,job-controller,disruption-controller",
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + filepath.Join(work, "kcm-certs"),
		}, nil, filepath.Join(work, "kube-controller-manager.log"))
		if err != nil {
			return err
		}
		kcm = p
		err = p.WaitHTTP(ctx, "https://127.0.0.1:"+strconv.Itoa(ports[0])+"/healthz", nil, time.Minute,
			func(status int) bool { return status == 200 })
		if testbed.PortTaken(err) {
			_ = p.Stop(10 * time.Second)
		}
		return err
	})
	Expect(err).NotTo(HaveOccurred())
	return kcm
}

// podsOf lists the pods of ns labelled app=app.
func podsOf(ctx context.Context, app string) []corev1.Pod {
	GinkgoHelper()
	var list corev1.PodList
	Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
	return list.Items
}
