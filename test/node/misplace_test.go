package node

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/misplace"
	"github.com/isamatch/isamatch/pkg/misplace/watch"
	"github.com/isamatch/isamatch/test/node/cluster"
)

// sigillCandidates are the x86-64 extensions testdata/sigill can execute,
// as /proc/cpuinfo names them: the spec runs the first one this node lacks.
var sigillCandidates = []string{"amx_tile", "avx512_fp16", "avx_vnni", "avx512f"}

// foreignCandidates are architectures Go builds for whose binaries this
// x86-64 node cannot execute, unless binfmt_misc hands them to an emulator.
var foreignCandidates = []string{"riscv64", "loong64", "s390x"}

// misplaceNamespace is where the specs' pods go (the webhook handles it).
const misplaceNamespace = podNamespace

var _ = Describe("Misplaced pods on a real node", Ordered, func() {
	var (
		foreignArch, foreignImage string
		missing, sigillImage      string
		misplaceOverlay           string
	)

	BeforeAll(func(ctx SpecContext) {
		if runtime.GOARCH != "amd64" {
			Skip("the SIGILL program is x86-64 assembly; this node is " + runtime.GOARCH)
		}
		dir := GinkgoT().TempDir()
		var err error
		missing, err = lackedExtension()
		Expect(err).NotTo(HaveOccurred())
		foreignArch = foreignArchitecture()
		GinkgoWriter.Printf("this node lacks %s; it cannot execute %s binaries natively\n", missing, foreignArch)

		By("building a linux/amd64 image of a " + foreignArch + " binary (go build GOARCH=" + foreignArch + ") and one of testdata/sigill (host gcc, static)")
		bin := filepath.Join(dir, "pause-"+foreignArch)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, ".")
		cmd.Dir = filepath.Join(repoRoot, "test", "node", "testdata", "pause")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+foreignArch)
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		// The image says linux/amd64 (containerd refuses to pull an image
		// whose config names another platform): the binary inside is what
		// the node cannot execute, as with an image built by a cross
		// compiler and labelled for the wrong platform.
		foreignImage = pushBinary(ctx, bin, "/pause", runtime.GOARCH, "foreign")
		sigillBin := filepath.Join(dir, "sigill")
		run(ctx, repoRoot, "gcc", "-static", "-O1", "-o", sigillBin, filepath.Join("test", "node", "testdata", "sigill", "sigill.c"))
		sigillImage = pushBinary(ctx, sigillBin, "/sigill", runtime.GOARCH, "sigill")

		By("installing config with the evict-misplaced component, a 10s audit and a 30s eviction grace")
		misplaceOverlay = writeMisplaceOverlay()
		GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", misplaceOverlay))
		DeferCleanup(func(ctx SpecContext) {
			for _, o := range []client.Object{
				&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "foreign"}},
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "sigill"}},
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "undecided"}},
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "scraper"}},
				&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-test-scraper"}},
			} {
				Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationForeground)))).To(Succeed())
			}
			tearDown(ctx, misplaceOverlay, namespace, labelerNamespace)
			Eventually(func(g Gomega) {
				var pods corev1.PodList
				g.Expect(cl.Client.List(ctx, &pods)).To(Succeed())
				g.Expect(pods.Items).To(BeEmpty(), "every pod stopped")
			}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		}, NodeTimeout(6*time.Minute))
		waitWebhookReady(ctx)
		Eventually(func(g Gomega) {
			g.Expect(isamatchLabels(ctx, g)).To(Equal(wantLabels))
		}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), "the labeler labelled the node")
	}, NodeTimeout(20*time.Minute))

	It("records a Warning on a pod that dies of SIGILL, naming the node's ISA and what the pod needs", func(ctx SpecContext) {
		pod := testbed.MakePod("sigill", misplaceNamespace).Image(sigillImage).Obj()
		pod.Spec.Containers[0].Args = []string{missing}
		createWhenWebhookAnswers(ctx, pod)
		Expect(pod.Annotations).To(HaveKey(isa.DecisionAnnotation), "decided: its image is linux/amd64 and says nothing more")
		ev := waitEvent(ctx, pod, watch.ReasonMisplaced, 4*time.Minute)
		Expect(ev.Type).To(Equal(corev1.EventTypeWarning))
		Expect(ev.Regarding.FieldPath).To(Equal("spec.containers{" + pod.Spec.Containers[0].Name + "}"))
		Expect(ev.Note).To(ContainSubstring("SIGILL"))
		Expect(ev.Note).To(ContainSubstring("node ISA: x86-64"))
		Expect(ev.Note).To(ContainSubstring(isa.KubeArchLabel+" In (amd64)"), "the image asks for nothing but its architecture")
		GinkgoWriter.Printf("%s: %s\n", ev.Reason, ev.Note)
		Consistently(func() []string { return eventReasons(ctx, pod) }).WithContext(ctx).WithTimeout(5*time.Second).
			ShouldNot(ContainElement(watch.ReasonEvicted), "a decided pod is not evicted: its replacement would be decided alike")
	})

	It("evicts a Deployment's pod admitted while the webhook was down that dies with exec format error; the replacement is decided and not evicted", func(ctx SpecContext) {
		By("scaling the webhook to 0: admission fails open (failurePolicy Ignore)")
		scaleWebhook(ctx, 0)
		// The Service may route to a killed replica for a moment (the
		// endpoint's removal, kube-proxy): create the pod until the API
		// server admits it without the webhook, then the Deployment.
		var undecided *corev1.Pod
		Eventually(func(g Gomega) {
			undecided = testbed.MakePod("undecided", misplaceNamespace).Image(pauseImage).Obj()
			g.Expect(cl.Client.Create(ctx, undecided)).To(Succeed())
			if _, ok := undecided.Annotations[isa.DecisionAnnotation]; ok {
				_ = cl.Client.Delete(ctx, undecided, client.GracePeriodSeconds(0))
				g.Eventually(func() bool {
					return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKeyFromObject(undecided), undecided))
				}).WithTimeout(time.Minute).Should(BeTrue())
				g.Expect(undecided.Annotations).NotTo(HaveKey(isa.DecisionAnnotation), "admitted without the webhook")
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		dep := foreignDeployment(foreignImage)
		Expect(cl.Client.Create(ctx, dep)).To(Succeed())

		var first corev1.Pod
		Eventually(func(g Gomega) {
			pods := deploymentPods(ctx, g)
			g.Expect(pods).To(HaveLen(1))
			first = pods[0]
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "the Deployment's pod, admitted")
		Expect(first.Annotations).NotTo(HaveKey(isa.DecisionAnnotation), "admitted without the webhook")

		// The webhook starts while the binary fails: its eviction grace
		// (misplacement.evictGrace, 30s here) runs from its start.
		By("scaling the webhook back while the " + foreignArch + " binary fails on this node")
		scaleWebhook(ctx, 2)
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(&first), &first)).To(Succeed())
			g.Expect(misplace.Detect(&first)).To(ContainElement(HaveField("Reason", misplace.ReasonExecFormat)))
		}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string {
			return fmt.Sprintf("pod status: %+v; events: %v", first.Status, eventReasons(ctx, &first))
		})
		waitWebhookReady(ctx)

		By("the webhook's leader notices, records, evicts")
		ev := waitEvent(ctx, &first, watch.ReasonMisplaced, 3*time.Minute)
		Expect(ev.Note).To(ContainSubstring("exec format error"))
		Expect(ev.Note).To(ContainSubstring("not decided by isamatch"))
		GinkgoWriter.Printf("%s: %s\n", ev.Reason, ev.Note)
		// Not before misplacement.evictGrace after the webhook started:
		// the API server must reach it again, or the replacement is
		// admitted undecided as well.
		waitEvent(ctx, &first, watch.ReasonEvicted, 3*time.Minute)
		var second corev1.Pod
		Eventually(func(g Gomega) {
			pods := deploymentPods(ctx, g)
			g.Expect(pods).To(HaveLen(1))
			second = pods[0]
			g.Expect(second.UID).NotTo(Equal(first.UID), "the misplaced pod is gone")
			g.Expect(second.Annotations).To(HaveKey(isa.DecisionAnnotation), "the replacement is decided")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

		By("the replacement, decided from an image that claims amd64, fails alike: recorded, not evicted")
		ev = waitEvent(ctx, &second, watch.ReasonMisplaced, 3*time.Minute)
		Expect(ev.Note).To(ContainSubstring("exec format error"))
		Expect(ev.Note).NotTo(ContainSubstring("not decided by isamatch"))
		Consistently(func() []string { return eventReasons(ctx, &second) }).WithContext(ctx).WithTimeout(5 * time.Second).
			ShouldNot(ContainElement(watch.ReasonEvicted))
		Consistently(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(undecided), undecided)).To(Succeed(), "a pod without a controller is not evicted")
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
	})

	It("exports the misplacements, the eviction and the audit's gauge from the leader", func(ctx SpecContext) {
		token := scrapeToken(ctx)
		want := []struct {
			name  string
			match map[string]string
		}{
			{"isamatch_runtime_misplacements_total", map[string]string{"reason": misplace.ReasonSIGILL}},
			{"isamatch_runtime_misplacements_total", map[string]string{"reason": misplace.ReasonExecFormat}},
			{"isamatch_misplaced_pod_evictions_total", map[string]string{"result": "evicted"}},
			{"isamatch_misplaced_pods", map[string]string{"reason": audit.ReasonRuntime}},
			{"isamatch_misplaced_pods", map[string]string{"reason": audit.ReasonUndecided}},
			{"isamatch_nodes", map[string]string{"arch": "amd64", "labelled": "true"}},
		}
		Eventually(func(g Gomega) {
			text := scrapeLeader(ctx, g, token)
			for _, w := range want {
				v, found, err := testbed.MetricValue(text, w.name, w.match)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(found).To(BeTrue(), "%s%v exported", w.name, w.match)
				g.Expect(v).To(BeNumerically(">=", 1), "%s%v", w.name, w.match)
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("lists them with kubectl isa audit -A", func(ctx SpecContext) {
		bin := installPlugin(ctx, GinkgoT().TempDir())
		var res struct {
			Findings []audit.Finding `json:"findings"`
		}
		out := run(ctx, repoRoot, bin, "--kubeconfig", cl.Kubeconfig, "audit", "-A", "-o", "json")
		Expect(json.Unmarshal([]byte(out), &res)).To(Succeed(), "%s", out)
		got := map[string][]string{}
		for _, f := range res.Findings {
			got[f.Namespace+"/"+f.Pod] = f.Reasons
		}
		Expect(got).To(HaveKeyWithValue(misplaceNamespace+"/sigill", []string{audit.ReasonRuntime}))
		Expect(got).To(HaveKeyWithValue(misplaceNamespace+"/undecided", []string{audit.ReasonUndecided}))
		GinkgoWriter.Print(run(ctx, repoRoot, bin, "--kubeconfig", cl.Kubeconfig, "audit", "-A", "-o", "wide"))
	})
})

// lackedExtension returns the first of sigillCandidates this host's
// /proc/cpuinfo does not list.
func lackedExtension() (string, error) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "", err
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	for _, c := range sigillCandidates {
		if !slices.Contains(flags, c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("this CPU has every extension testdata/sigill can execute (%s)", strings.Join(sigillCandidates, ", "))
}

// foreignArchitecture returns the first of foreignCandidates that
// binfmt_misc does not hand to an emulator on this host.
func foreignArchitecture() string {
	handlers, _ := filepath.Glob("/proc/sys/fs/binfmt_misc/*")
	emulated := func(arch string) bool {
		for _, h := range handlers {
			if strings.Contains(filepath.Base(h), arch) {
				return true
			}
		}
		return false
	}
	for _, a := range foreignCandidates {
		if !emulated(a) {
			return a
		}
	}
	Skip("binfmt_misc emulates every architecture of " + strings.Join(foreignCandidates, ", "))
	return ""
}

// pushBinary pushes a one-binary image for linux/arch to the suite's
// registry and returns its reference by digest.
func pushBinary(ctx context.Context, bin, path, arch, repo string) string {
	GinkgoHelper()
	img, err := cluster.BinaryImage(bin, path, arch)
	Expect(err).NotTo(HaveOccurred())
	ref := reg.Host + "/isamatch-test/" + repo
	tag, err := name.ParseReference(ref+":"+imageTag, name.Insecure)
	Expect(err).NotTo(HaveOccurred())
	Expect(remote.Write(tag, img, remote.WithContext(ctx))).To(Succeed())
	d, err := img.Digest()
	Expect(err).NotTo(HaveOccurred())
	return ref + "@" + d.String()
}

// writeMisplaceOverlay writes an overlay of the suite's install overlay
// with the evict-misplaced component and audit.interval 10s (a user may
// set either).
func writeMisplaceOverlay() string {
	GinkgoHelper()
	// Departs from the shipped defaults (audit.interval 1m,
	// misplacement.evictGrace 1m) as an operator may, so the specs wait
	// less.
	return writeWebhookOverlay("misplace", "91-audit.yaml", "audit:\n  interval: 10s\nmisplacement:\n  evictGrace: 30s\n",
		filepath.Join(dist, "config", "components", "evict-misplaced"))
}

// writeWebhookOverlay writes the overlay name beside the suite's install
// overlay: that overlay with components, and a drop-in (file, the
// WebhookConfiguration fields it sets) over the webhook's configuration.
func writeWebhookOverlay(name, file, fields string, components ...string) string {
	GinkgoHelper()
	ov := filepath.Join(filepath.Dir(overlay), name)
	Expect(os.MkdirAll(ov, 0o755)).To(Succeed())
	base, err := filepath.Rel(ov, overlay)
	Expect(err).NotTo(HaveOccurred())
	var k strings.Builder
	fmt.Fprintf(&k, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n", base)
	if len(components) > 0 {
		k.WriteString("components:\n")
	}
	for _, c := range components {
		rel, err := filepath.Rel(ov, c)
		Expect(err).NotTo(HaveOccurred())
		fmt.Fprintf(&k, "  - %s\n", rel)
	}
	k.WriteString(webhookDropIn(ov, file, fields))
	Expect(os.WriteFile(filepath.Join(ov, "kustomization.yaml"), []byte(k.String()), 0o644)).To(Succeed())
	GinkgoWriter.Printf("overlay %s:\n%s", ov, k.String())
	return ov
}

// scaleWebhook scales the webhook Deployment and, to 0, deletes its pods
// at once, as a crash would stop them (not after the preStop sleep and
// server.shutdownDelay), and waits until they are gone.
func scaleWebhook(ctx context.Context, replicas int32) {
	GinkgoHelper()
	var d appsv1.Deployment
	Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	Expect(cl.Client.Patch(ctx, &d, patch)).To(Succeed())
	if replicas > 0 {
		return
	}
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
		for i := range pods.Items {
			g.Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)))).To(Succeed())
		}
		g.Expect(pods.Items).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

func foreignDeployment(image string) *appsv1.Deployment {
	labels := map[string]string{"app": "foreign"}
	pod := testbed.MakePod("foreign", misplaceNamespace).Image(image).Obj()
	// runc reports a failed execve after the container started, on its
	// stderr ("exec /pause: exec format error"), with exit code 1: the
	// status shows it only when the kubelet copies the log's end into it.
	pod.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "foreign"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
}

// deploymentPods are the foreign Deployment's pods not being deleted.
func deploymentPods(ctx context.Context, g Gomega) []corev1.Pod {
	var pods corev1.PodList
	g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(misplaceNamespace), client.MatchingLabels{"app": "foreign"})).To(Succeed())
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
}

// podEvents are the Events regarding pod (its UID).
func podEvents(ctx context.Context, g Gomega, pod *corev1.Pod) []eventsv1.Event {
	var list eventsv1.EventList
	g.Expect(cl.Client.List(ctx, &list, client.InNamespace(pod.Namespace))).To(Succeed())
	return slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.UID != pod.UID })
}

func eventReasons(ctx context.Context, pod *corev1.Pod) []string {
	var out []string
	for _, e := range podEvents(ctx, Default, pod) {
		out = append(out, e.Reason)
	}
	return out
}

// waitEvent waits for an Event of reason regarding pod.
func waitEvent(ctx context.Context, pod *corev1.Pod, reason string, timeout time.Duration) eventsv1.Event {
	GinkgoHelper()
	var ev eventsv1.Event
	Eventually(func(g Gomega) {
		i := slices.IndexFunc(podEvents(ctx, g, pod), func(e eventsv1.Event) bool { return e.Reason == reason })
		g.Expect(i).To(BeNumerically(">=", 0), "an Event %s on pod %s", reason, pod.Name)
		ev = podEvents(ctx, g, pod)[i]
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(2*time.Second).Should(Succeed(), func() string {
		var p corev1.Pod
		_ = cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), &p)
		return fmt.Sprintf("pod status: %+v; events: %v", p.Status.ContainerStatuses, eventReasons(ctx, pod))
	})
	return ev
}

// scrapeToken binds config/webhook's isamatch-metrics-reader to a
// ServiceAccount and returns a token of it for the metrics audience, as
// the monitoring component's Prometheus sends.
func scrapeToken(ctx context.Context) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: misplaceNamespace, Name: "scraper"}}
	if err := cl.Client.Create(ctx, sa); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-test-scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "isamatch-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}}
	if err := cl.Client.Create(ctx, crb); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{metricsauth.DefaultAudience}, ExpirationSeconds: ptr.To[int64](3600)}}
	Expect(cl.Client.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	return tr.Status.Token
}

// scrapeLeader reads /metrics of the webhook replica that holds the
// Lease, over HTTPS (its self-signed certificate is not verified, as the
// ServiceMonitor does).
func scrapeLeader(ctx context.Context, g Gomega, token string) string {
	var lease coordinationv1.Lease
	g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	podName, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	var pod corev1.Pod
	g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: podName}, &pod)).To(Succeed())
	g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+pod.Status.PodIP+":8080/metrics", nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed metrics certificate
	resp, err := hc.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s", body)
	return string(body)
}
