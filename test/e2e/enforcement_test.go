package e2e

import (
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// warnings collects the admission warnings the API server returns.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

var _ = Describe("The webhook in warn mode, on the paper's cluster", Ordered, func() {
	var (
		c    *democluster.Cluster
		cs   kubernetes.Interface
		seen = &warnings{}
		ns   string
	)
	onlyAMD := experiment.Image{Repo: "warn/amd64", Tag: "v1", Platforms: []experiment.Platform{{OS: "linux", Architecture: "amd64"}}}
	onlyARM := experiment.Image{Repo: "warn/arm64", Tag: "v1", Platforms: []experiment.Platform{{OS: "linux", Architecture: "arm64"}}}
	riscv := func() string { return c.Registry.Host + "/paper/base:v1" }
	ref := func(i experiment.Image) string { return c.Registry.Host + "/" + i.Repo + ":" + i.Tag }

	BeforeAll(func(ctx SpecContext) {
		c = startCluster(ctx, democluster.Options{
			Nodes:       experiment.PaperCluster(),
			ExtraImages: []experiment.Image{onlyAMD, onlyARM},
			ConfigureWebhook: func(wc *v1alpha1.WebhookConfiguration) {
				wc.Admission.Enforcement = mutate.EnforcementWarn
			},
		})
		cfg := rest.CopyConfig(c.CP.Config)
		cfg.WarningHandler = seen
		var err error
		cs, err = kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		created, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "warn-"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		ns = created.Name
		Expect(c.PrepareNamespace(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))).To(Succeed())
		})
	}, NodeTimeout(5*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(c.LogTails(40))
		}
	})

	// Each kind of denial of deny mode: in warn mode the pod is created,
	// with the denial as a warning and in the decision, and no affinity.
	denials := []struct {
		name    string
		pod     func(name string) *corev1.Pod
		message string
	}{
		{"malformed request", func(n string) *corev1.Pod {
			return testbed.MakePod(n, ns).Image(riscv()).Annotation(isa.RequestAnnotation, "rv64q!").Obj()
		}, "rv64q!"},
		{"request over the length limit", func(n string) *corev1.Pod {
			return testbed.MakePod(n, ns).Image(riscv()).Annotation(isa.RequestAnnotation, strings.Repeat("rv64gc_", engine.MaxRequestBytes/7+1)).Obj()
		}, fmt.Sprintf("the limit is %d bytes", engine.MaxRequestBytes)},
		{"images cannot serve the request", func(n string) *corev1.Pod {
			return testbed.MakePod(n, ns).Image(ref(onlyAMD)).Annotation(isa.RequestAnnotation, "rv64imfd").Obj()
		}, "cannot be served by image"},
		{"no common architecture", func(n string) *corev1.Pod {
			return testbed.MakePod(n, ns).Image(ref(onlyAMD)).Container("second", ref(onlyARM)).Obj()
		}, "no common architecture"},
		{"nodeSelector excludes every allowed node", func(n string) *corev1.Pod {
			return testbed.MakePod(n, ns).Image(riscv()).NodeSelector(isa.KubeArchLabel, "amd64").Obj()
		}, "excludes every node"},
	}
	for i, tc := range denials {
		It("admits a pod it would deny for "+tc.name+", with a warning and no affinity", func(ctx SpecContext) {
			seen.take()
			pod, err := cs.CoreV1().Pods(ns).Create(ctx, tc.pod(fmt.Sprintf("would-deny-%d", i)), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred(), "warn mode must not deny")
			got := seen.take()
			Expect(got).To(ContainElement(And(HavePrefix("isamatch would deny this pod: "), ContainSubstring(tc.message))), "warnings %q", got)
			decision, err := contract.ParseDecision(pod.Annotations)
			Expect(err).NotTo(HaveOccurred())
			Expect(decision.WouldDeny).To(BeTrue(), "decision %q", pod.Annotations[isa.DecisionAnnotation])
			Expect(decision.Reason).To(ContainSubstring(tc.message))
			if a := pod.Spec.Affinity; a != nil {
				Expect(a.NodeAffinity).To(BeNil(), "no node affinity for a pod that would be denied")
			}
		})
	}

	It("accepts the prefixed request key and places the pod by it", func(ctx SpecContext) {
		pod := testbed.MakePod("prefixed", ns).Image(riscv()).Annotation(isa.RequestAnnotation, "rv64imfdv").Obj()
		Expect(c.Client.Create(ctx, pod)).To(Succeed())
		Expect(testbed.WaitScheduled(ctx, c.Client, []*corev1.Pod{pod})).To(Succeed())
		Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.Spec.NodeName).To(BeElementOf("node4", "node5"), "decision %q", pod.Annotations[isa.DecisionAnnotation])
	})

	It("accepts ARCH=riscv64, the kubelet's architecture name, and places the pod on a RISC-V node", func(ctx SpecContext) {
		seen.take()
		pod, err := cs.CoreV1().Pods(ns).Create(ctx,
			testbed.MakePod("arch-riscv64", ns).Image(c.Registry.Host+"/paper/cross:v1").Label(isa.RequestLabel, "riscv64").Obj(), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(seen.take()).NotTo(ContainElement(HavePrefix("isamatch would deny")))
		Expect(testbed.WaitScheduled(ctx, c.Client, []*corev1.Pod{pod})).To(Succeed())
		Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.Spec.NodeName).To(BeElementOf("node3", "node4", "node5"), "decision %q", pod.Annotations[isa.DecisionAnnotation])
	})
})
