package webhook

import (
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// ownWebhook is a webhook process of a spec's own, the only one admitting
// the pods of its namespace (which the suite's main webhook ignores).
type ownWebhook struct {
	metricsURL string
	proc       *testbed.Process
}

// startOwnWebhook starts the webhook binary with a configuration for a
// test (its serving certificate from envtest, resolution in the request,
// no gate controller, no Events, plain-HTTP metrics) that configure then
// changes (the registry it reads, say), waits until it is
// ready, and makes namespace ns (with no pull secret) its own through a
// MutatingWebhookConfiguration of ns's name. Everything is undone when
// the container's specs end.
func startOwnWebhook(ctx SpecContext, ns string, configure func(*v1alpha1.WebhookConfiguration)) *ownWebhook {
	GinkgoHelper()
	work := GinkgoT().TempDir()
	wio := cp.Env.WebhookInstallOptions
	w := &ownWebhook{}
	var port int
	err := testbed.StartOnFreePorts(3, func(ports []int) error {
		port = ports[0]
		config, err := configfile.Webhook(work, func(c *v1alpha1.WebhookConfiguration) {
			no := false
			c.Server.CertDir, c.Server.Port, c.Server.CertRotation = wio.LocalServingCertDir, port, &no
			c.Admission.Resolve = mutate.ResolveSync
			c.Gate.Controller, c.Events.Pods = false, false
			c.Metrics.Secure = false
			c.Metrics.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[1])
			c.Health.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[2])
		}, configure)
		if err != nil {
			return err
		}
		args := []string{"--kubeconfig=" + cp.KubeconfigPath, "--config=" + config, "-v=1"}
		p, err := testbed.StartProcess("webhook-"+ns, webhookBin, args, nil, filepath.Join(work, "webhook-"+ns+".log"))
		if err != nil {
			return err
		}
		w.proc = p
		w.metricsURL = "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/metrics"
		err = p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[2])+"/readyz", nil, 60*time.Second,
			func(status int) bool { return status == http.StatusOK })
		if testbed.PortTaken(err) {
			_ = p.Stop(10 * time.Second)
		}
		return err
	})
	if w.proc != nil {
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry(ns+" webhook log", w.proc.LogTail(60))
			}
			Expect(w.proc.Stop(10 * time.Second)).To(Succeed())
		})
	}
	Expect(err).NotTo(HaveOccurred(), "the %s webhook never became ready", ns)

	By("a namespace without pull secrets, admitted by the " + ns + " webhook only")
	ownNamespace(ctx, ns, "https://127.0.0.1:"+strconv.Itoa(port)+"/mutate-v1-pod", "")
	return w
}

// ownNamespace makes namespace ns (with the pull secret of password and
// the ServiceAccount's saSecrets, as namespaceWith) one that the suite's
// main webhook ignores and that the webhook at url alone admits, through a
// MutatingWebhookConfiguration of ns's name that fails closed (a refused
// call is a failed create). It is deleted when the container's specs end.
func ownNamespace(ctx SpecContext, ns, url, password string, saSecrets ...string) {
	GinkgoHelper()
	namespaceWith(ctx, ns, password, saSecrets...)
	var nsObj corev1.Namespace
	Expect(cp.Client.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
	if nsObj.Labels == nil {
		nsObj.Labels = map[string]string{}
	}
	nsObj.Labels[isa.IgnoreLabel] = "true"
	Expect(cp.Client.Update(ctx, &nsObj)).To(Succeed())
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "pods.isa.isamatch.io",
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To(url),
				CABundle: cp.Env.WebhookInstallOptions.LocalServingCAData,
			},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			SideEffects:   ptr.To(admissionregistrationv1.SideEffectClassNone),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		}},
	}
	Expect(cp.Client.Create(ctx, mwc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(cp.Client.Delete(ctx, mwc)).To(Succeed()) })
}
