package webhook

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The noisy-neighbour spec: namespace noisyNS floods pods whose images are
// on registries that drip one byte a second, while healthyNS admits pods
// of cold images on the suite's healthy registry.
const (
	noisyNS   = "noisy"
	healthyNS = "healthy"
	// dripHosts slow registries: with 8 requests per host (the default
	// --registry-max-per-host) they could hold 96 requests, far more than
	// the 32 the webhook has in all, so only the per-namespace limit
	// (--registry-max-per-namespace) keeps slots for the healthy
	// namespace. The images of one pod are on distinct hosts, so the
	// per-host limit never leaves a resolution of the flood without its
	// request.
	dripHosts = 12
	// floodWorkers create noisy pods at once, each pod naming
	// floodImages images spread over the drip hosts.
	floodWorkers = 8
	floodImages  = 8
	floodPods    = 8 // per worker
	// healthyPods are admitted one after the other, alone and then beside
	// the flood.
	healthyPods = 8
	// noisyBudget is the webhook's --budget: how long an admission waits
	// for the registry before it admits without the image's constraint.
	noisyBudget = 5 * time.Second
)

var _ = Describe("A noisy neighbour", Ordered, func() {
	var (
		ncp   *testbed.ControlPlane
		work  string
		cs    *kubernetes.Clientset
		drips []*testbed.DripRegistry
	)

	BeforeAll(func(ctx SpecContext) {
		work = GinkgoT().TempDir()
		for range dripHosts {
			d, err := testbed.StartDripRegistry()
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(d.Stop)
			drips = append(drips, d)
		}

		By("starting a control plane of its own, so the flood reaches no other spec")
		hookCfg, err := testbed.EnvtestWebhookConfiguration(repoRoot)
		Expect(err).NotTo(HaveOccurred())
		ncp, err = testbed.Start(ctx, testbed.Options{WebhookInstallOptions: envtest.WebhookInstallOptions{
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hookCfg},
		}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(ncp.Stop()).To(Succeed()) })
		cs, err = kubernetes.NewForConfig(ncp.Config)
		Expect(err).NotTo(HaveOccurred())
		for name, s := range nodeISAs {
			i, err := isa.Parse(s)
			Expect(err).NotTo(HaveOccurred())
			node := testbed.MakeNode(name).Arch(string(i.Arch)).Labels(isa.NodeLabels(i, nil)).Obj()
			Expect(testbed.CreateReadyNode(ctx, ncp.Client, node)).To(Succeed())
		}
		Expect(ncp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-system"}})).To(Succeed())
		for _, ns := range []string{noisyNS, healthyNS} {
			Expect(democluster.SetUpNamespace(ctx, ncp.Client, ns, nil, secretName, reg.DockerConfigJSON())).To(Succeed())
		}
	}, NodeTimeout(3*time.Minute))

	// startWebhook runs the webhook for one spec with --resolve=mode.
	startWebhook := func(ctx context.Context, mode string) {
		GinkgoHelper()
		w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
			Bin: webhookBin, CP: ncp, RegistryCA: reg.CAFile, Log: filepath.Join(work, "webhook-noisy-"+mode+".log"), Verbose: true,
			Configure: func(c *v1alpha1.WebhookConfiguration) {
				c.Admission.Resolve = mode
				c.Admission.Budget = metav1.Duration{Duration: noisyBudget}
				c.Registry.AllowRegistries = []string{reg.Host}
				c.Namespace = "isamatch-system"
				c.Registry.InsecureRegistries = nil
				for _, d := range drips {
					c.Registry.InsecureRegistries = append(c.Registry.InsecureRegistries, d.Host)
				}
			},
		})
		if w.Process != nil {
			p := w.Process
			DeferCleanup(func() {
				if CurrentSpecReport().Failed() {
					AddReportEntry("noisy webhook log", p.LogTail(80))
				}
				_ = p.Stop(10 * time.Second)
			})
		}
		Expect(err).NotTo(HaveOccurred(), "the webhook never became ready")
	}

	// coldRun pushes n images never seen before to the healthy registry,
	// then creates one pod of each in healthyNS, one after the other. It
	// returns each pod's latency: in sync mode the admission's, in auto
	// mode the time until the gate controller released it. Every pod must
	// get its affinity.
	run := 0
	coldRun := func(ctx context.Context, mode string, n int) []time.Duration {
		GinkgoHelper()
		run++
		var refs []string
		for i := range n {
			repo, tag := "noisy/cold", fmt.Sprintf("%d-%d", run, i)
			_, err := testbed.PushImage(ctx, reg, repo, tag, testbed.Platform{Arch: "riscv64", Variant: "rva23u64",
				// A label of its own: a new digest, nothing cached.
				Labels: map[string]string{"org.example.cold": tag}})
			Expect(err).NotTo(HaveOccurred())
			refs = append(refs, reg.Ref(repo, tag))
		}
		var took []time.Duration
		for i, ref := range refs {
			pod := testbed.MakePod(fmt.Sprintf("cold-%d-%d", run, i), healthyNS).Image(ref).Obj()
			start := time.Now()
			created, err := cs.CoreV1().Pods(healthyNS).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			for mode != "sync" && engine.HasGate(created.Spec.SchedulingGates) && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
				created, err = cs.CoreV1().Pods(healthyNS).Get(ctx, pod.Name, metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred())
			}
			took = append(took, time.Since(start))
			Expect(archesOf(requiredTerms(created))).To(Equal([]string{"riscv64"}), describe(created))
			Expect(requiredTerms(created)[0].keys).To(HaveKeyWithValue(rva23Key, "Exists"), describe(created))
		}
		return took
	}

	noisyNeighbour := func(ctx context.Context, mode string) {
		GinkgoHelper()
		startWebhook(ctx, mode)
		By("measuring the healthy namespace alone")
		coldRun(ctx, mode, 1) // warm-up: the first connection, token and Secret reads
		alone := coldRun(ctx, mode, healthyPods)

		By("flooding the noisy namespace with pods of dripping images")
		floodCtx, stopFlood := context.WithCancel(ctx)
		var flood sync.WaitGroup
		DeferCleanup(func() { stopFlood(); flood.Wait() })
		var mu sync.Mutex
		noisyCreated := 0
		for wi := range floodWorkers {
			flood.Go(func() {
				for n := 0; n < floodPods && floodCtx.Err() == nil; n++ {
					pw := testbed.MakePod(fmt.Sprintf("flood-%s-%d-%d", mode, wi, n), noisyNS)
					for i := range floodImages {
						pw = pw.Container(fmt.Sprintf("c%d", i), fmt.Sprintf("%s/flood/app:%d-%d-%d", drips[(n*floodImages+wi+i)%len(drips)].Host, wi, n, i))
					}
					if _, err := cs.CoreV1().Pods(noisyNS).Create(floodCtx, pw.Obj(), metav1.CreateOptions{}); err == nil {
						mu.Lock()
						noisyCreated++
						mu.Unlock()
					}
				}
			})
		}
		noisyCount := func() int {
			mu.Lock()
			defer mu.Unlock()
			return noisyCreated
		}
		held := func() int64 {
			var n int64
			for _, d := range drips {
				n += d.InFlight()
			}
			return n
		}
		// The drip registries hold what the webhook lets the noisy
		// namespace have (8 requests by default) within a second or two.
		Eventually(held).WithTimeout(20*time.Second).WithPolling(50*time.Millisecond).Should(BeNumerically(">=", 8),
			"the flood never reached the drip registries")
		// Then the figure reported is the held count once it stops moving.
		heldBefore := int64(-1)
		Eventually(func() bool {
			n := held()
			stable := n == heldBefore
			heldBefore = n
			return stable
		}).WithTimeout(20*time.Second).WithPolling(250*time.Millisecond).Should(BeTrue(), "the drip registries' held requests never settled")

		By("measuring the healthy namespace beside the flood")
		beside := coldRun(ctx, mode, healthyPods)
		heldAfter := held()
		stopFlood()

		// What the spec judges is behaviour, not speed: each healthy pod
		// was resolved (coldRun checked its image's constraint, which a pod
		// that found no registry slot within the budget would lack) and
		// none waited the budget out. The latencies are reported, not
		// compared: how much slower a pod is beside the flood depends on
		// how busy the machine is.
		a, b := median(alone), median(beside)
		AddReportEntry("noisy neighbour, --resolve="+mode, fmt.Sprintf(
			"healthy pods: alone p50 %v max %v; beside the flood p50 %v max %v (%.1fx); drip registries held %d then %d requests; %d noisy pods admitted",
			a, slices.Max(alone), b, slices.Max(beside), float64(b)/float64(a), heldBefore, heldAfter, noisyCount()))
		GinkgoWriter.Printf("alone %v\nbeside %v\nheld %d, %d\n", alone, beside, heldBefore, heldAfter)
		Expect(slices.Max(beside)).To(BeNumerically("<", noisyBudget),
			"a healthy admission waited the whole budget: %v", beside)
	}

	It("does not slow the admissions of another namespace's cold images, which keep their affinity (sync)", func(ctx SpecContext) {
		noisyNeighbour(ctx, "sync")
	})
	// In auto mode the healthy pods are gated and released by the gate
	// controller: the flood's gated pods may hold only a quarter of its
	// workers, each for at most one attempt, so the healthy namespace's
	// pods are picked up at once and released with their affinity.
	It("does not delay the release of another namespace's gated pods, which get their affinity (auto)", func(ctx SpecContext) {
		noisyNeighbour(ctx, "auto")
	})
})

// median is the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
