package webhook

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
)

// shippedWebhookName is the webhook entry of config/webhook's
// MutatingWebhookConfiguration: the name label the API server's admission
// metrics carry, which the monitoring component's alert selects.
const shippedWebhookName = "pods.isa.isamatch.io"

var _ = Describe("The API server's admission metrics the failing-open alert reads", Ordered, func() {
	const ns = "failopen"

	// probe is a configuration with the shipped webhook's name that calls
	// an address where nothing listens, for pods labelled probe=policy
	// only.
	probe := func(policy admissionregistrationv1.FailurePolicyType) *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "isamatch-test-probe-" + strings.ToLower(string(policy))},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name:                    shippedWebhookName,
				AdmissionReviewVersions: []string{"v1"},
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				FailurePolicy:           ptr.To(policy),
				TimeoutSeconds:          ptr.To[int32](2),
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/mutate-v1-pod")},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": string(policy)}},
			}},
		}
	}

	BeforeAll(func(ctx SpecContext) {
		Expect(client.IgnoreAlreadyExists(cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		for _, p := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Ignore, admissionregistrationv1.Fail} {
			mwc := probe(p)
			Expect(cp.Client.Create(ctx, mwc)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(cp.Client.Delete(ctx, mwc))).To(Succeed()) })
		}
	})

	// apiserverMetric scrapes the API server's /metrics and returns the
	// value of name on the series with labels.
	apiserverMetric := func(ctx context.Context, g Gomega, name string, labels map[string]string) float64 {
		cs, err := kubernetes.NewForConfig(cp.Config)
		g.Expect(err).NotTo(HaveOccurred())
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		v, found, err := testbed.MetricValue(string(raw), name, labels)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue(), "the API server exports %s%v", name, labels)
		return v
	}

	It("counts a pod admitted without the webhook under failurePolicy Ignore in apiserver_admission_webhook_fail_open_count", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			pod := testbed.MakePod("", ns).Image("registry.example/app:v1").Obj()
			pod.GenerateName, pod.Labels = "ignore-", map[string]string{"probe": string(admissionregistrationv1.Ignore)}
			g.Expect(cp.Client.Create(ctx, pod)).To(Succeed(), "failing open, the pod is admitted")
			g.Expect(apiserverMetric(ctx, g, "apiserver_admission_webhook_fail_open_count",
				map[string]string{"name": shippedWebhookName, "type": "admit"})).To(BeNumerically(">=", 1))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("counts a pod refused under failurePolicy Fail in apiserver_admission_webhook_rejection_count with error_type calling_webhook_error", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			pod := testbed.MakePod("", ns).Image("registry.example/app:v1").Obj()
			pod.GenerateName, pod.Labels = "fail-", map[string]string{"probe": string(admissionregistrationv1.Fail)}
			err := cp.Client.Create(ctx, pod)
			g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "failing closed, the pod is refused: %v", err)
			g.Expect(apiserverMetric(ctx, g, "apiserver_admission_webhook_rejection_count",
				map[string]string{"name": shippedWebhookName, "error_type": "calling_webhook_error"})).To(BeNumerically(">=", 1))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})
})
