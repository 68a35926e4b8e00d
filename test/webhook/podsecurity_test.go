package webhook

import (
	"context"
	"errors"
	"maps"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/test/framework"
)

// podSecurityLabel is the Pod Security admission label a namespace
// enforces.
const podSecurityLabel = "pod-security.kubernetes.io/enforce"

// The namespaces of config/ carry Pod Security labels and the workloads
// of config/ run in them: a pod built from each workload's template is
// created with a server-side dry run in the namespace as shipped, so a
// change to either the labels or the manifests that parts them fails here.
var _ = Describe("Pod Security admission of the shipped namespaces", Ordered, func() {
	var (
		objs      []runtime.Object
		webhook   *appsv1.Deployment
		labeler   *appsv1.DaemonSet
		namespace = map[string]*corev1.Namespace{}
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		objs, err = manifests.Render(ctx, "", filepath.Join(repoRoot, "config"))
		if errors.Is(err, manifests.ErrNoKubectl) && !framework.InCI() {
			Skip(err.Error())
		}
		Expect(err).NotTo(HaveOccurred())
		deps := manifests.Named(objs, "isamatch-webhook", func(d *appsv1.Deployment) string { return d.Name })
		Expect(deps).To(HaveLen(1))
		webhook = deps[0]
		dss := manifests.Named(objs, "isamatch-labeler", func(d *appsv1.DaemonSet) string { return d.Name })
		Expect(dss).To(HaveLen(1))
		labeler = dss[0]

		By("creating the shipped namespaces with their labels, and the ServiceAccounts the pods run as")
		for _, o := range objs {
			switch o := o.(type) {
			case *corev1.Namespace:
				Expect(o.Labels).To(HaveKey(podSecurityLabel), "namespace %s enforces no Pod Security level", o.Name)
				applyNamespace(ctx, o)
				namespace[o.Name] = o
			case *corev1.ServiceAccount:
				err := cp.Client.Create(ctx, o.DeepCopy())
				if !apierrors.IsAlreadyExists(err) {
					Expect(err).NotTo(HaveOccurred(), "create ServiceAccount %s/%s", o.Namespace, o.Name)
				}
			}
		}
		Expect(namespace).To(HaveKey(webhook.Namespace))
		Expect(namespace).To(HaveKey(labeler.Namespace))
	})

	It("admit the webhook's pod under its namespace's level, restricted", func(ctx SpecContext) {
		ns := namespace[webhook.Namespace]
		Expect(ns.Labels).To(HaveKeyWithValue(podSecurityLabel, "restricted"))
		warnings, err := dryRunPod(ctx, podOf(webhook.Namespace, webhook.Spec.Template))
		Expect(err).NotTo(HaveOccurred(), "the webhook's pod template under %s=%s", podSecurityLabel, ns.Labels[podSecurityLabel])
		Expect(warnings).To(BeEmpty(), "the namespace also warns at restricted")
	})

	It("refuse a privileged pod, and a baseline pod, in the webhook's namespace", func(ctx SpecContext) {
		privileged := podOf(webhook.Namespace, webhook.Spec.Template)
		privileged.Name = "privileged"
		privileged.Spec.Containers[0].SecurityContext.Privileged = ptr.To(true)
		privileged.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		_, err := dryRunPod(ctx, privileged)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring(`violates PodSecurity "restricted`), ContainSubstring("privileged")))

		// Without a security context a pod meets baseline: only restricted
		// refuses it.
		plain := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "baseline", Namespace: webhook.Namespace},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:v1"}}},
		}
		_, err = dryRunPod(ctx, plain)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring(`violates PodSecurity "restricted`), ContainSubstring("runAsNonRoot")))
	})

	It("admit the labeler's pod in its own namespace, with the warnings of what it needs beyond restricted", func(ctx SpecContext) {
		ns := namespace[labeler.Namespace]
		Expect(ns.Labels).To(HaveKeyWithValue(podSecurityLabel, "privileged"))
		warnings, err := dryRunPod(ctx, podOf(labeler.Namespace, labeler.Spec.Template))
		Expect(err).NotTo(HaveOccurred(), "the labeler's pod template under %s=%s", podSecurityLabel, ns.Labels[podSecurityLabel])
		Expect(warnings).To(ContainElement(And(ContainSubstring(`violate PodSecurity "restricted`), ContainSubstring("hostPath"))))

		By("and refuse the same pod in the webhook's namespace: it needs a namespace of its own")
		_, err = dryRunPod(ctx, podOf(webhook.Namespace, labeler.Spec.Template))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		Expect(err.Error()).To(ContainSubstring("hostPath"))
	})
})

// applyNamespace creates ns, or, when another spec created it without
// labels, sets its labels as shipped.
func applyNamespace(ctx context.Context, ns *corev1.Namespace) {
	GinkgoHelper()
	err := cp.Client.Create(ctx, ns.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred(), "create namespace %s", ns.Name)
		return
	}
	var cur corev1.Namespace
	Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(ns), &cur)).To(Succeed())
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	maps.Copy(cur.Labels, ns.Labels)
	Expect(cp.Client.Update(ctx, &cur)).To(Succeed())
}

// podOf is the pod a controller would create from template in namespace.
func podOf(namespace string, template corev1.PodTemplateSpec) *corev1.Pod {
	t := template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "from-template", Namespace: namespace,
			Labels: t.Labels, Annotations: t.Annotations,
		},
		Spec: t.Spec,
	}
}

// dryRunPod creates pod with a server-side dry run (every admission
// plugin runs, nothing is stored) and returns the response's warnings.
func dryRunPod(ctx context.Context, pod *corev1.Pod) ([]string, error) {
	GinkgoHelper()
	w := &warningCollector{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = w
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return w.all(), err
}
