package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/test/framework"
)

const (
	archKey     = isa.ArchLabel
	levelKey    = isa.X86LevelLabel
	vectorKey   = isa.NativePrefix + "rv.v"
	rva23Key    = isa.NativePrefix + "rv.rva23u64"
	decisionKey = isa.DecisionAnnotation
	secretName  = "regcred"
)

// warningCollector records the admission warnings of API responses.
type warningCollector struct {
	mu   sync.Mutex
	list []string
}

func (w *warningCollector) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningCollector) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}

// createPod creates pod through the API server (so the webhook admits it)
// and returns the stored pod and the warnings of the response.
func createPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, []string, error) {
	GinkgoHelper()
	w := &warningCollector{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = w
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	return created, w.all(), err
}

// namespaceWith creates a namespace, its default ServiceAccount (no
// controller-manager runs here) referencing saSecrets, and a pull secret
// named regcred holding password (none if password is "").
func namespaceWith(ctx context.Context, name, password string, saSecrets ...string) {
	GinkgoHelper()
	Expect(cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	for _, s := range saSecrets {
		sa.ImagePullSecrets = append(sa.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	err := cp.Client.Create(ctx, sa)
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	if password == "" {
		return
	}
	creds := *reg
	creds.Password = password
	Expect(cp.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: creds.DockerConfigJSON()},
	})).To(Succeed())
}

// term is one required node-selector term reduced to what the specs check.
type term struct {
	arches []string          // values of isa.isamatch.io/arch or kubernetes.io/arch In
	keys   map[string]string // other isamatch keys -> operator (and value for Gt)
}

func requiredTerms(pod *corev1.Pod) []term {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []term
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		tt := term{keys: map[string]string{}}
		for _, r := range t.MatchExpressions {
			switch {
			case (r.Key == archKey || r.Key == corev1.LabelArchStable) && r.Operator == corev1.NodeSelectorOpIn:
				tt.arches = append(tt.arches, r.Values...)
			case r.Operator == corev1.NodeSelectorOpGt && len(r.Values) == 1:
				tt.keys[r.Key] = "Gt " + r.Values[0]
			default:
				tt.keys[r.Key] = string(r.Operator)
			}
		}
		out = append(out, tt)
	}
	return out
}

func archesOf(terms []term) []string {
	var all []string
	for _, t := range terms {
		for _, a := range t.arches {
			if !slices.Contains(all, a) {
				all = append(all, a)
			}
		}
	}
	slices.Sort(all)
	return all
}

var _ = Describe("Pods created through the API server", func() {
	It("are constrained to the platforms of a multi-platform index pulled with the pod's own secret", func(ctx SpecContext) {
		namespaceWith(ctx, "index", reg.Password)
		pod := testbed.MakePod("multi", "index").Image(reg.Ref(multiImage, "v1")).ImagePullSecret(secretName).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(BeEmpty())
		terms := requiredTerms(created)
		Expect(terms).NotTo(BeEmpty(), describe(created))
		Expect(archesOf(terms)).To(Equal([]string{"amd64", "riscv64"}), describe(created))
		for _, t := range terms {
			Expect(t.arches).To(HaveLen(1), "every term names one architecture: %s", describe(created))
			switch t.arches[0] {
			case "riscv64": // variant rva23u64: the profile's bundle label is required
				Expect(t.keys).To(HaveKeyWithValue(rva23Key, "Exists"), describe(created))
			case "amd64": // variant v3
				Expect(t.keys).To(HaveKeyWithValue(levelKey, "Gt 2"), describe(created))
			}
		}
		decision, err := contract.ParseDecision(created.Annotations)
		Expect(err).NotTo(HaveOccurred(), describe(created))
		Expect(decision.RequiredNodes).To(BeNumerically(">", 0), describe(created))
		By("the pod's IsamatchDecided Event carries the readable decision, with the index's platforms")
		Eventually(func(g Gomega) {
			note, err := testbed.DecisionNote(ctx, cp.Client, created)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(note).To(And(ContainSubstring(reg.Ref(multiImage, "v1")+" ["), ContainSubstring("linux/amd64/v3"), ContainSubstring("linux/riscv64/rva23u64")), "the decision of %s", created.Name)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("are constrained to the architecture of a single-architecture image", func(ctx SpecContext) {
		namespaceWith(ctx, "single", reg.Password)
		pod := testbed.MakePod("amd", "single").Image(reg.Ref(amdImage, "v1")).ImagePullSecret(secretName).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(BeEmpty())
		terms := requiredTerms(created)
		Expect(terms).NotTo(BeEmpty(), describe(created))
		for _, t := range terms {
			Expect(t.arches).To(Equal([]string{"amd64"}), describe(created))
		}
	})

	It("follow an image's isa.request label when the pod asks nothing", func(ctx SpecContext) {
		namespaceWith(ctx, "label", reg.Password)
		pod := testbed.MakePod("rvv", "label").Image(reg.Ref(rvvImage, "v1")).ImagePullSecret(secretName).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(BeEmpty())
		terms := requiredTerms(created)
		Expect(terms).NotTo(BeEmpty(), describe(created))
		for _, t := range terms {
			Expect(t.arches).To(Equal([]string{"riscv64"}), describe(created))
			Expect(t.keys).To(HaveKeyWithValue(vectorKey, "Exists"), describe(created))
		}
	})

	It("are resolved with their ServiceAccount's pull secret", func(ctx SpecContext) {
		namespaceWith(ctx, "viasa", reg.Password, secretName)
		pod := testbed.MakePod("private", "viasa").Image(reg.Ref(saImage, "v1")).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(BeEmpty())
		terms := requiredTerms(created)
		Expect(terms).NotTo(BeEmpty(), describe(created))
		for _, t := range terms {
			Expect(t.arches).To(Equal([]string{"arm64"}), describe(created))
		}
	})

	It("are allowed with a warning when the registry refuses them for lack of a secret", func(ctx SpecContext) {
		namespaceWith(ctx, "nosecret", "")
		ref := reg.Ref(amdImage, "v1")
		created, warnings, err := createPod(ctx, testbed.MakePod("amd", "nosecret").Image(ref).Obj())
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ContainElement(And(ContainSubstring(ref), ContainSubstring("unauthorized"))))
		Expect(archesOf(requiredTerms(created))).To(BeEmpty(), describe(created))
	})

	It("are allowed with a warning naming the image and the error when the secret's password is wrong", func(ctx SpecContext) {
		namespaceWith(ctx, "wrongpw", "not-the-password")
		ref := reg.Ref(multiImage, "v1")
		created, warnings, err := createPod(ctx, testbed.MakePod("multi", "wrongpw").Image(ref).ImagePullSecret(secretName).Obj())
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ContainElement(And(ContainSubstring(ref), ContainSubstring("unauthorized"))))
		Expect(archesOf(requiredTerms(created))).To(BeEmpty(), describe(created))
	})

	It("are denied when isa.request is malformed, with the annotation, the value and the grammar", func(ctx SpecContext) {
		namespaceWith(ctx, "malformed", reg.Password)
		pod := testbed.MakePod("bad", "malformed").Image(reg.Ref(amdImage, "v1")).ImagePullSecret(secretName).
			Annotation(isa.BareRequestAnnotation, "rv64gcv | ???").Obj()
		_, _, err := createPod(ctx, pod)
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want a Forbidden denial, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring(isa.BareRequestAnnotation), ContainSubstring("???"), ContainSubstring("accepted")))
	})

	It("are left alone in a namespace labelled isa.isamatch.io/ignore=true", func(ctx SpecContext) {
		Expect(cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: "optout", Labels: map[string]string{isa.IgnoreLabel: "true"}}})).To(Succeed())
		Expect(cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "optout"}})).
			To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)))
		created, warnings, err := createPod(ctx, testbed.MakePod("amd", "optout").Image(reg.Ref(amdImage, "v1")).Obj())
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(BeEmpty())
		Expect(created.Annotations).NotTo(HaveKey(decisionKey))
		Expect(created.Spec.Affinity).To(BeNil())
	})
})

var _ = Describe("The webhook process", func() {
	It("counts cache misses, registry errors by kind and admission latency in its metrics", func(ctx SpecContext) {
		namespaceWith(ctx, "metrics", "")
		// An image the registry refuses anonymously: one unauthorized error.
		_, _, err := createPod(ctx, testbed.MakePod("amd", "metrics").Image(reg.Ref(amdImage, "v1")).Obj())
		Expect(err).NotTo(HaveOccurred())
		text := scrapeMetrics(ctx)
		misses, ok, err := testbed.MetricValue(text, "isamatch_registry_cache_misses_total", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue(), "no cache-miss counter in:\n%s", text)
		Expect(misses).To(BeNumerically(">=", 1))
		unauthorized, ok, err := testbed.MetricValue(text, "isamatch_registry_errors_total", map[string]string{"kind": "unauthorized"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue(), "no unauthorized error counter in:\n%s", text)
		Expect(unauthorized).To(BeNumerically(">=", 1))
		Expect(text).To(MatchRegexp(`controller_runtime_webhook_latency_seconds_count\{webhook="/mutate-v1-pod"\} [1-9]`))
	})
})

var _ = Describe("The webhook server", func() {
	It("speaks HTTP/1.1 only unless --enable-http2 is given", func(ctx SpecContext) {
		d := tls.Dialer{Config: &tls.Config{
			NextProtos:         []string{"h2", "http/1.1"},
			InsecureSkipVerify: true, // only the negotiated protocol is checked here
		}}
		conn, err := d.DialContext(ctx, "tcp", webhookAddr)
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		Expect(conn.(*tls.Conn).ConnectionState().NegotiatedProtocol).To(Equal("http/1.1"))
	})
})

var _ = Describe("The shipped manifests", func() {
	It("are accepted by the API server: kubectl apply --dry-run=server -k config", func(ctx SpecContext) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			if framework.InCI() {
				Fail("kubectl not found: " + err.Error())
			}
			Skip("kubectl not installed")
		}
		// Namespaced objects are checked against existing namespaces: a
		// server dry run does not create the namespaces it applies.
		for _, ns := range []string{"isamatch-system", "isamatch-labeler"} {
			err = cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			if !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
		cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", cp.KubeconfigPath, "apply", "--dry-run=server",
			"-k", filepath.Join(repoRoot, "config"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Run()).To(Succeed(), "kubectl apply --dry-run=server -k config:\n%s\n%s", stdout.String(), stderr.String())
		for _, want := range []string{
			"mutatingwebhookconfiguration.admissionregistration.k8s.io/isamatch",
			"deployment.apps/isamatch-webhook",
			"poddisruptionbudget.policy/isamatch-webhook",
			"service/isamatch-webhook",
			"secret/isamatch-webhook-cert",
		} {
			Expect(stdout.String()).To(ContainSubstring(want))
		}
		Expect(stdout.String()).To(ContainSubstring("(server dry run)"))
	})

	// recursiveReadOnly is beta (on by default) from Kubernetes 1.31; an
	// older API server without the RecursiveReadOnlyMounts gate drops the
	// field without a word, and the labeler's host mounts would keep
	// writable submounts. docs/compatibility.md's table rests on this.
	It("keep recursiveReadOnly on the labeler's host mounts (server dry run)", func(ctx SpecContext) {
		objs, err := manifests.Render(ctx, "", filepath.Join(repoRoot, "config"))
		if errors.Is(err, manifests.ErrNoKubectl) && !framework.InCI() {
			Skip(err.Error())
		}
		Expect(err).NotTo(HaveOccurred())
		dss := manifests.Named(objs, "isamatch-labeler", func(d *appsv1.DaemonSet) string { return d.Name })
		Expect(dss).To(HaveLen(1))
		ds := dss[0]
		err = cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ds.Namespace}})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		want := recursiveReadOnlyMounts(ds)
		Expect(want).NotTo(BeEmpty(), "the shipped DaemonSet sets recursiveReadOnly on no mount")
		Expect(cp.Client.Create(ctx, ds, client.DryRunAll)).To(Succeed())
		Expect(recursiveReadOnlyMounts(ds)).To(Equal(want),
			"the API server dropped recursiveReadOnly: Kubernetes 1.31 or newer (or 1.30 with --feature-gates=RecursiveReadOnlyMounts=true) is needed")
	})
})

// recursiveReadOnlyMounts maps each mount of ds's containers that sets
// recursiveReadOnly to its value.
func recursiveReadOnlyMounts(ds *appsv1.DaemonSet) map[string]corev1.RecursiveReadOnlyMode {
	got := map[string]corev1.RecursiveReadOnlyMode{}
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.RecursiveReadOnly != nil {
				got[c.Name+":"+m.MountPath] = *m.RecursiveReadOnly
			}
		}
	}
	return got
}
