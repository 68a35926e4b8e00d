package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// readyzStatus returns the HTTP status of url, 0 when it does not answer.
func readyzStatus(ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

var _ = Describe("Certificate rotation", Serial, func() {
	It("fills the Secret, injects the CA into the isamatch configuration, and serves that certificate and turns ready with nothing mounted yet", func(ctx SpecContext) {
		const ns = "isamatch-system"
		err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		// The shipped, empty Secret the rotator fills.
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-webhook-cert", Namespace: ns}, Type: corev1.SecretTypeOpaque}
		Expect(cp.Client.Create(ctx, secret)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(cp.Client.Delete(ctx, secret)).To(Succeed()) })

		// The shipped configuration itself, service reference and all: the
		// one the rotator injects its CA into.
		mwc, err := testbed.ShippedWebhookConfiguration(repoRoot)
		Expect(err).NotTo(HaveOccurred())
		Expect(mwc.Name).To(Equal("isamatch"))
		Expect(mwc.Webhooks[0].ClientConfig.CABundle).To(BeEmpty())
		Expect(cp.Client.Create(ctx, mwc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(cp.Client.Delete(ctx, mwc)).To(Succeed()) })

		certDir := GinkgoT().TempDir()
		port, err := testbed.FreePort()
		Expect(err).NotTo(HaveOccurred())
		healthPort, err := testbed.FreePort()
		Expect(err).NotTo(HaveOccurred())
		readyz := "http://127.0.0.1:" + strconv.Itoa(healthPort) + "/readyz"
		work := GinkgoT().TempDir()
		config, err := configfile.Webhook(work, func(c *v1alpha1.WebhookConfiguration) {
			yes := true
			c.Server.CertDir, c.Server.Port, c.Server.CertRotation = certDir, port, &yes
			c.Namespace = ns
			c.Health.BindAddress, c.Metrics.BindAddress = "127.0.0.1:"+strconv.Itoa(healthPort), "0"
		})
		Expect(err).NotTo(HaveOccurred())
		proc, err := testbed.StartProcess("webhook-rotating", webhookBin,
			[]string{"--kubeconfig=" + cp.KubeconfigPath, "--config=" + config}, nil, filepath.Join(work, "webhook-rotating.log"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry("rotating webhook log", proc.LogTail(60))
			}
			Expect(proc.Stop(10 * time.Second)).To(Succeed())
		})

		By("the rotator filling the Secret")
		Eventually(func(g Gomega) {
			g.Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
			g.Expect(secret.Data).To(And(HaveKey("ca.crt"), HaveKey("tls.crt"), HaveKey("tls.key")))
		}).WithContext(ctx).WithTimeout(60*time.Second).Should(Succeed(), "log:\n%s", proc.LogTail(30))

		By("the CA being injected into the MutatingWebhookConfiguration")
		Eventually(func(g Gomega) {
			g.Expect(cp.Client.Get(ctx, client.ObjectKey{Name: "isamatch"}, mwc)).To(Succeed())
			g.Expect(mwc.Webhooks[0].ClientConfig.CABundle).To(Equal(secret.Data["ca.crt"]))
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		By("turning ready without the kubelet having mounted the Secret (the cert dir stays empty)")
		Eventually(func() int { return readyzStatus(ctx, readyz) }).WithContext(ctx).
			WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).Should(Equal(http.StatusOK), "log:\n%s", proc.LogTail(30))
		entries, err := os.ReadDir(certDir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())

		By("serving the Secret's certificate, which its CA verifies for the Service's name")
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{
			RootCAs: roots, ServerName: "isamatch-webhook." + ns + ".svc", MinVersion: tls.VersionTLS12,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Close()).To(Succeed())
	})
})
