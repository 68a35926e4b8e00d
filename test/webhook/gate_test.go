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
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The gate specs run on a control plane of their own, with kube-scheduler,
// the shipped RBAC and pod policy, and the webhook acting as its
// ServiceAccount, in front of a registry that answers each image after
// registryDelay.
const (
	registryDelay = 5 * time.Second
	gateNS        = "gated"
	gateTimeout   = 8 * time.Second
	// absentLeaseNS, as the webhook's namespace, makes it elect its gate
	// controller in a namespace that does not exist.
	absentLeaseNS = "isamatch-absent"
)

// gateImages are pushed for these specs only, so no other spec has cached
// them.
var (
	gateMulti = "gate/multi" // linux/riscv64 rva23u64 + linux/amd64 v3
	gateAMD   = "gate/amd64" // linux/amd64
	gateRVV   = "gate/rvv"   // linux/riscv64, LABEL isa.request=rv64gcv
)

// bindWatch records, for every pod of a namespace, whether it was ever
// seen bound while it still carried the gate or before the gate
// controller's decision was on it.
type bindWatch struct {
	mu        sync.Mutex
	bound     map[string]string // pod -> node
	violation []string
}

func (b *bindWatch) see(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.bound[pod.Name]; seen {
		return
	}
	b.bound[pod.Name] = pod.Spec.NodeName
	c, err := contract.ParseDecision(pod.Annotations)
	switch {
	case engine.HasGate(pod.Spec.SchedulingGates):
		b.violation = append(b.violation, pod.Name+" bound while gated")
	case err != nil || (c.Gate != contract.GateResolved && c.Gate != contract.GateTimeout && pod.Labels["released-by"] != "test" && pod.Labels["released-by"] != "admission"):
		b.violation = append(b.violation, fmt.Sprintf("%s bound to %s before the gate controller's decision (%q)", pod.Name, pod.Spec.NodeName, pod.Annotations[isa.DecisionAnnotation]))
	}
}

func (b *bindWatch) boundCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.bound)
}

func (b *bindWatch) violations() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.violation)
}

var _ = Describe("The scheduling gate", Ordered, func() {
	var (
		gcp     *testbed.ControlPlane
		proxy   *testbed.SlowProxy
		saKube  string
		work    string
		hook    democluster.Webhook
		watched *bindWatch
		cs      *kubernetes.Clientset
	)

	// startWebhook runs the webhook as its ServiceAccount with the gate
	// controller on or off, its configuration then changed by configure
	// (nil: nothing more).
	startWebhook := func(ctx context.Context, name string, controller bool, configure func(*v1alpha1.WebhookConfiguration)) {
		GinkgoHelper()
		var leaseNS string
		w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
			Bin: webhookBin, CP: gcp, RegistryCA: reg.CAFile, Log: filepath.Join(work, name+".log"),
			Kubeconfig: saKube, Verbose: true,
			Configure: func(c *v1alpha1.WebhookConfiguration) {
				c.Admission.Resolve = mutate.ResolveAuto
				c.Registry.InsecureRegistries = []string{proxy.Host}
				c.Gate.Timeout = metav1.Duration{Duration: gateTimeout}
				c.Gate.Controller = controller
				if configure != nil {
					configure(c)
				}
				leaseNS = c.Namespace
			},
		})
		hook = w
		if w.Process != nil {
			p := w.Process
			DeferCleanup(func() {
				if CurrentSpecReport().Failed() {
					AddReportEntry(name+" log", p.LogTail(80))
				}
				_ = p.Stop(10 * time.Second)
			})
		}
		Expect(err).NotTo(HaveOccurred(), "webhook %s never became ready", name)
		// Admission gates only while a gate controller holds its Lease:
		// the specs that expect gating wait until this replica has seen
		// it held (this process elects itself for the controller, or for
		// the pod events without it).
		if leaseNS != absentLeaseNS {
			Eventually(func(g Gomega) {
				v, ok, err := testbed.MetricValue(scrapeMetricsAt(ctx, "http://"+w.MetricsAddr+"/metrics"), "isamatch_webhook_gate_controller_alive", nil)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(ok && v == 1).To(BeTrue(), "isamatch_webhook_gate_controller_alive is not 1")
			}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		}
	}
	stopWebhook := func() {
		GinkgoHelper()
		Expect(hook.Process.Stop(10 * time.Second)).To(Succeed())
	}
	// admit creates pod and returns it as stored and how long the API
	// server took, admission included.
	admit := func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, time.Duration) {
		GinkgoHelper()
		start := time.Now()
		created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		took := time.Since(start)
		Expect(err).NotTo(HaveOccurred())
		return created, took
	}
	get := func(ctx context.Context, name string) *corev1.Pod {
		GinkgoHelper()
		pod, err := cs.CoreV1().Pods(gateNS).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		return pod
	}
	gateState := func(pod *corev1.Pod) string {
		c, err := contract.ParseDecision(pod.Annotations)
		if err != nil {
			return "unparsable: " + err.Error()
		}
		return c.Gate
	}
	events := func(ctx context.Context, pod, reason string) []eventsv1.Event {
		GinkgoHelper()
		list, err := cs.EventsV1().Events(gateNS).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var out []eventsv1.Event
		for _, e := range list.Items {
			if e.Regarding.Name == pod && e.Reason == reason {
				out = append(out, e)
			}
		}
		return out
	}

	BeforeAll(func(ctx SpecContext) {
		work = GinkgoT().TempDir()
		var err error
		proxy, err = testbed.StartSlowProxy(reg, registryDelay)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Stop)
		_, err = testbed.PushIndex(ctx, reg, gateMulti, "v1", []testbed.Platform{{Arch: "riscv64", Variant: "rva23u64"}, {Arch: "amd64", Variant: "v3"}})
		Expect(err).NotTo(HaveOccurred())
		_, err = testbed.PushImage(ctx, reg, gateAMD, "v1", testbed.Platform{Arch: "amd64"})
		Expect(err).NotTo(HaveOccurred())
		_, err = testbed.PushImage(ctx, reg, gateRVV, "v1", testbed.Platform{Arch: "riscv64", Labels: map[string]string{isa.BareImageRequestLabel: "rv64gcv"}})
		Expect(err).NotTo(HaveOccurred())

		By("starting a control plane with kube-scheduler")
		hookCfg, err := testbed.EnvtestWebhookConfiguration(repoRoot)
		Expect(err).NotTo(HaveOccurred())
		gcp, err = testbed.Start(ctx, testbed.Options{
			Scheduler: true,
			WebhookInstallOptions: envtest.WebhookInstallOptions{
				MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hookCfg},
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(gcp.Stop()).To(Succeed()) })
		cs, err = kubernetes.NewForConfig(gcp.Config)
		Expect(err).NotTo(HaveOccurred())
		for name, s := range nodeISAs {
			i, err := isa.Parse(s)
			Expect(err).NotTo(HaveOccurred())
			node := testbed.MakeNode(name).Arch(string(i.Arch)).Labels(isa.NodeLabels(i, nil)).Obj()
			Expect(testbed.CreateReadyNode(ctx, gcp.Client, node)).To(Succeed())
		}

		By("installing config/webhook's RBAC and policies and the pull-secrets component's RBAC; the webhook acts as its ServiceAccount")
		for _, ns := range []string{"isamatch-system", gateNS} {
			Expect(gcp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			Expect(gcp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})).To(Succeed())
		}
		// The suite's registry needs credentials: the webhook reads pull
		// secrets, with the RBAC of the component that turns that on.
		for _, f := range []string{"webhook/rbac.yaml", "webhook/validatingadmissionpolicy.yaml", "components/pull-secrets/rbac.yaml"} {
			for _, o := range shippedObjects(ctx, filepath.Join("config", f)) {
				if k := o.GetKind(); k == "Role" || k == "RoleBinding" {
					o.SetNamespace("isamatch-system")
				}
				Expect(gcp.Client.Create(ctx, o)).To(Succeed(), "create %s %s", o.GetKind(), o.GetName())
			}
		}
		kc, err := clientcmd.LoadFromFile(gcp.KubeconfigPath)
		Expect(err).NotTo(HaveOccurred())
		for _, ai := range kc.AuthInfos {
			ai.Impersonate = "system:serviceaccount:isamatch-system:isamatch-webhook"
			ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:isamatch-system", "system:authenticated"}
		}
		saKube = filepath.Join(work, "webhook-sa.kubeconfig")
		Expect(clientcmd.WriteToFile(*kc, saKube)).To(Succeed())

		By("watching every pod of the namespace for a binding before its affinity is written")
		watched = &bindWatch{bound: map[string]string{}}
		// Not BeforeAll's context: that one ends with BeforeAll, and the
		// watch must last through every spec until AfterAll counts.
		w, err := cs.CoreV1().Pods(gateNS).Watch(context.Background(), metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted {
					watched.see(pod)
				}
			}
		}()
	}, NodeTimeout(3*time.Minute))

	AfterAll(func() {
		Expect(watched.violations()).To(BeEmpty(), "pods bound before isamatch's affinity")
		Expect(watched.boundCount()).To(BeNumerically(">=", 9), "the watch saw too few bindings to prove anything")
	})

	It("admits at once while the registry takes 5s, then binds each pod to a node its images run on", func(ctx SpecContext) {
		startWebhook(ctx, "webhook-gate", true, nil)
		pods := []struct {
			pod   *corev1.Pod
			nodes []string
		}{
			{testbed.MakePod("multi", gateNS).Image(proxy.Ref(gateMulti, "v1")).Obj(), []string{"rv-rva23", "x86-v3"}},
			{testbed.MakePod("amd", gateNS).Image(proxy.Ref(gateAMD, "v1")).Obj(), []string{"x86-v3"}},
			{testbed.MakePod("rvv-label", gateNS).Image(proxy.Ref(gateRVV, "v1")).Obj(), []string{"rv-gcv", "rv-rva23"}},
			{testbed.MakePod("request", gateNS).Image(proxy.Ref(gateMulti, "v1")).Annotation(isa.RequestAnnotation, "rv64imfdv").Obj(), []string{"rv-rva23"}},
			// Its own single required term would hold only one of the
			// image's two alternatives had admission not split it.
			{testbed.MakePod("own-term", gateNS).Image(proxy.Ref(gateMulti, "v1")).
				NodeAffinity(corev1.LabelHostname, corev1.NodeSelectorOpNotIn, "arm64-one").Obj(), []string{"rv-rva23", "x86-v3"}},
			{testbed.MakePod("own-term-amd", gateNS).Image(proxy.Ref(gateMulti, "v1")).
				NodeAffinity(corev1.LabelHostname, corev1.NodeSelectorOpIn, "x86-v3", "rv-gcv").Obj(), []string{"x86-v3"}},
		}
		var slowest time.Duration
		for _, p := range pods {
			created, took := admit(ctx, p.pod)
			slowest = max(slowest, took)
			// Less than the registry's delay: admission did not wait for
			// it, however slow a busy machine makes the API server.
			Expect(took).To(BeNumerically("<", registryDelay), "pod %s admitted in %v; the registry takes %v", p.pod.Name, took, registryDelay)
			Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeTrue(), "pod %s admitted without the gate: %s", p.pod.Name, created.Annotations[isa.DecisionAnnotation])
			Expect(gateState(created)).To(Equal(contract.GatePending))
		}
		AddReportEntry("slowest admission with the registry taking 5s", slowest.String())
		GinkgoWriter.Printf("slowest gated admission: %v (registry delay %v)\n", slowest, registryDelay)

		for _, p := range pods {
			Eventually(func(g Gomega) {
				pod := get(ctx, p.pod.Name)
				g.Expect(pod.Spec.NodeName).NotTo(BeEmpty(), "pod %s not bound: %s", pod.Name, describe(pod))
				g.Expect(p.nodes).To(ContainElement(pod.Spec.NodeName), describe(pod))
				g.Expect(gateState(pod)).To(Equal(contract.GateResolved), describe(pod))
			}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		}
		Eventually(func() []eventsv1.Event { return events(ctx, "multi", "IsamatchReleased") }).
			WithContext(ctx).WithTimeout(20 * time.Second).ShouldNot(BeEmpty())
		metrics := scrapeMetricsAt(ctx, "http://"+hook.MetricsAddr+"/metrics")
		v, ok, err := testbed.MetricValue(metrics, "isamatch_webhook_gate_releases_total", map[string]string{"reason": "resolved"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(v).To(BeNumerically(">=", len(pods)))
		v, _, err = testbed.MetricValue(metrics, "isamatch_webhook_decisions_total", map[string]string{"outcome": "gated"})
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(BeNumerically(">=", len(pods)))
		stopWebhook()
	})

	It("with the controller stopped keeps pods gated and unbound; once it runs, releases them past the bound with a warning", func(ctx SpecContext) {
		startWebhook(ctx, "webhook-no-controller", false, nil)
		names := []string{"stopped-1", "stopped-2"}
		for _, n := range names {
			created, took := admit(ctx, testbed.MakePod(n, gateNS).Image(proxy.Ref(gateMulti, "v1")).Annotation(isa.RequestAnnotation, "rv64gc").Obj())
			Expect(took).To(BeNumerically("<", registryDelay), "pod %s admitted in %v: it waited for the registry (%v)", n, took, registryDelay)
			Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeTrue())
		}
		By("waiting past the bound with no controller")
		Consistently(func(g Gomega) {
			for _, n := range names {
				pod := get(ctx, n)
				g.Expect(pod.Spec.NodeName).To(BeEmpty())
				g.Expect(engine.HasGate(pod.Spec.SchedulingGates)).To(BeTrue())
			}
		}).WithContext(ctx).WithTimeout(gateTimeout + 2*time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		stopWebhook()

		By("starting the controller: the pods are past the bound")
		startWebhook(ctx, "webhook-late-controller", true, nil)
		for _, n := range names {
			Eventually(func(g Gomega) {
				pod := get(ctx, n)
				g.Expect(pod.Spec.NodeName).NotTo(BeEmpty(), describe(pod))
				// What was known: the request rv64gc; the image, never
				// resolved, is left out.
				g.Expect([]string{"rv-gcv", "rv-rva23"}).To(ContainElement(pod.Spec.NodeName), describe(pod))
				g.Expect(gateState(pod)).To(Equal(contract.GateTimeout), describe(pod))
			}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
			Eventually(func() []eventsv1.Event { return events(ctx, n, "IsamatchGateTimeout") }).
				WithContext(ctx).WithTimeout(20*time.Second).ShouldNot(BeEmpty(), "no timeout event on %s", n)
			Expect(events(ctx, n, "IsamatchGateTimeout")[0].Type).To(Equal(corev1.EventTypeWarning))
		}
		v, ok, err := testbed.MetricValue(scrapeMetricsAt(ctx, "http://"+hook.MetricsAddr+"/metrics"), "isamatch_webhook_gate_releases_total", map[string]string{"reason": "timeout"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(v).To(BeNumerically(">=", len(names)))
	})

	It("with no gate controller holding its Lease resolves images at admission instead of gating, so no pod waits for a release", func(ctx SpecContext) {
		// The Lease's namespace does not exist: leader election fails for
		// ever, and no controller would release a gated pod.
		startWebhook(ctx, "webhook-no-lease", true, func(c *v1alpha1.WebhookConfiguration) { c.Namespace = absentLeaseNS })
		for k, n := range []string{"no-lease-1", "no-lease-2"} {
			created, took := admit(ctx, testbed.MakePod(n, gateNS).Image(proxy.Ref(gateAMD, "v1")).Label("released-by", "admission").Obj())
			Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeFalse(), "pod %s gated with no controller alive: %s", n, created.Annotations[isa.DecisionAnnotation])
			Expect(gateState(created)).To(BeEmpty())
			if k == 0 { // the second finds the image in the cache
				Expect(took).To(BeNumerically(">=", registryDelay), "pod %s admitted in %v: its image was not resolved at admission", n, took)
			}
			Eventually(func(g Gomega) {
				pod := get(ctx, n)
				g.Expect(pod.Spec.NodeName).To(Equal("x86-v3"), describe(pod))
			}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		}
		v, ok, err := testbed.MetricValue(scrapeMetricsAt(ctx, "http://"+hook.MetricsAddr+"/metrics"), "isamatch_webhook_gate_controller_alive", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok && v == 0).To(BeTrue(), "isamatch_webhook_gate_controller_alive = %v (found %t), want 0", v, ok)
	})

	It("leaves alone a pod whose gate someone else removed", func(ctx SpecContext) {
		// An image no one resolved keeps the controller resolving for 5s.
		startWebhook(ctx, "webhook-other-release", true, nil)
		created, _ := admit(ctx, testbed.MakePod("other-release", gateNS).Image(proxy.Ref(gateAMD, "v1")+"-x").
			Annotation(isa.RequestAnnotation, "x86-64-v2").Label("released-by", "test").Obj())
		Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeTrue())
		pod := created.DeepCopy()
		pod.Spec.SchedulingGates = nil
		Expect(gcp.Client.Update(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(get(ctx, "other-release").Spec.NodeName).To(Equal("x86-v3"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			pod := get(ctx, "other-release")
			g.Expect(gateState(pod)).To(Equal(contract.GatePending), "the controller wrote on a pod it no longer gates: %s", describe(pod))
		}).WithContext(ctx).WithTimeout(registryDelay + 3*time.Second).Should(Succeed())
		Expect(events(ctx, "other-release", "IsamatchReleased")).To(BeEmpty())
	})

	It("releases a pod whose image never resolves with admission.fallbackArchitecture's architecture, and binds it there", func(ctx SpecContext) {
		startWebhook(ctx, "webhook-fallback", true, func(c *v1alpha1.WebhookConfiguration) { c.Admission.FallbackArchitecture = "amd64" })
		// A tag the registry does not have: after the proxy's delay, 404.
		created, _ := admit(ctx, testbed.MakePod("fallback", gateNS).Image(proxy.Ref(gateAMD, "v1")+"-missing").Obj())
		Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeTrue())
		Eventually(func(g Gomega) {
			pod := get(ctx, "fallback")
			g.Expect(pod.Spec.NodeName).To(Equal("x86-v3"), describe(pod))
			counts, err := contract.ParseDecision(pod.Annotations)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(counts.Fallback).To(Equal("amd64"), describe(pod))
			g.Expect(events(ctx, "fallback", "IsamatchReleased")).To(ContainElement(HaveField("Note", ContainSubstring("fallback architecture amd64 applied"))), describe(pod))
		}).WithContext(ctx).WithTimeout(registryDelay + 30*time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		stopWebhook()
	})

	It("refuses through the shipped pod policy any other change the webhook's account makes", func(ctx SpecContext) {
		cfg, err := clientcmd.BuildConfigFromFlags("", saKube)
		Expect(err).NotTo(HaveOccurred())
		asWebhook, err := client.New(cfg, client.Options{Scheme: gcp.Scheme})
		Expect(err).NotTo(HaveOccurred())
		refused := func(err error, msg string) {
			GinkgoHelper()
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(msg))
		}

		startWebhook(ctx, "webhook-policy", true, nil)
		By("a pod without the gate")
		var pod corev1.Pod
		Expect(gcp.Client.Get(ctx, client.ObjectKey{Namespace: gateNS, Name: "amd"}, &pod)).To(Succeed())
		orig := pod.DeepCopy()
		pod.Annotations[isa.DecisionAnnotation] = "rewritten"
		refused(asWebhook.Patch(ctx, &pod, client.MergeFrom(orig)), "may only remove its scheduling gate "+isa.ResolveGate)

		By("a gated pod whose labels change with the gate's removal")
		created, _ := admit(ctx, testbed.MakePod("policy", gateNS).Image(proxy.Ref(gateRVV, "v1")+"-x").Obj())
		Expect(engine.HasGate(created.Spec.SchedulingGates)).To(BeTrue())
		next := created.DeepCopy()
		next.Spec.SchedulingGates = nil
		next.Labels = map[string]string{"stolen": "true"}
		refused(asWebhook.Patch(ctx, next, client.MergeFrom(created)), "not its other annotations, labels")

		By("the same pod's images")
		next = created.DeepCopy()
		next.Spec.SchedulingGates = nil
		next.Spec.Containers[0].Image = proxy.Ref(gateAMD, "v1")
		refused(asWebhook.Patch(ctx, next, client.MergeFrom(created)), "only change the node affinity")
	})
})
