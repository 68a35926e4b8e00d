package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// The API server's webhook client certificate: its CA (the webhook's
// --client-ca-file), the key pair itself, and the port of the webhook it
// is presented to (the AdmissionConfiguration's kubeconfig names it).
var (
	clientCAFile   string
	apiServerCert  tls.Certificate
	clientCertPort int
)

// setUpAPIServerClientCert creates a client CA and a certificate it signs,
// picks the port of the client-certificate webhook, and writes the
// AdmissionConfiguration whose kubeconfig makes the API server present the
// certificate to https://127.0.0.1:<port> (and to nothing else). It returns
// the AdmissionConfiguration's path for --admission-control-config-file.
func setUpAPIServerClientCert(dir string) string {
	GinkgoHelper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-client-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	Expect(err).NotTo(HaveOccurred())
	ca, err := x509.ParseCertificate(caDER)
	Expect(err).NotTo(HaveOccurred())
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-webhook-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, key.Public(), caKey)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	apiServerCert, err = tls.X509KeyPair(certPEM, keyPEM)
	Expect(err).NotTo(HaveOccurred())

	clientCAFile = filepath.Join(dir, "webhook-client-ca.crt")
	Expect(os.WriteFile(clientCAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)).To(Succeed())
	clientCertPort, err = testbed.FreePort()
	Expect(err).NotTo(HaveOccurred())

	kubeconfig := filepath.Join(dir, "admission-kubeconfig.yaml")
	Expect(os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
  - name: "127.0.0.1:%d"
    user:
      client-certificate-data: %s
      client-key-data: %s
`, clientCertPort, base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM))), 0o600)).To(Succeed())
	admission := filepath.Join(dir, "admission-configuration.yaml")
	Expect(os.WriteFile(admission, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: "`+kubeconfig+`"
`), 0o600)).To(Succeed())
	return admission
}

var _ = Describe("The webhook endpoint", Ordered, func() {
	// A second webhook process, hardened: it requires the API server's
	// client certificate and serves authenticated metrics over HTTPS.
	var (
		hardened   *testbed.Process
		metricsURL string
	)
	BeforeAll(func(ctx SpecContext) {
		wio := cp.Env.WebhookInstallOptions
		err := testbed.StartOnFreePorts(2, func(ports []int) error {
			metricsURL = "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/metrics"
			work := GinkgoT().TempDir()
			config, err := configfile.Webhook(work, func(c *v1alpha1.WebhookConfiguration) {
				no := false
				c.Server.CertDir, c.Server.Port, c.Server.CertRotation = wio.LocalServingCertDir, clientCertPort, &no
				c.Server.ClientCAFile = clientCAFile
				c.Registry.CAFile, c.Registry.AllowRegistries = reg.CAFile, []string{reg.Host}
				// sync: the affinity is in the admission response itself,
				// which is what the specs below read.
				c.Admission.Resolve = mutate.ResolveSync
				c.Registry.PullSecrets = true
				c.Metrics.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
				c.Health.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[1])
			})
			if err != nil {
				return err
			}
			p, err := testbed.StartProcess("webhook-hardened", webhookBin,
				[]string{"--kubeconfig=" + cp.KubeconfigPath, "--config=" + config},
				nil, filepath.Join(work, "webhook-hardened.log"))
			if err != nil {
				return err
			}
			hardened = p
			err = p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[1])+"/readyz", nil, 60*time.Second,
				func(status int) bool { return status == http.StatusOK })
			if testbed.PortTaken(err) {
				_ = p.Stop(10 * time.Second)
			}
			return err
		})
		if hardened != nil {
			DeferCleanup(func() {
				if CurrentSpecReport().Failed() {
					AddReportEntry("hardened webhook log", hardened.LogTail(60))
				}
				Expect(hardened.Stop(10 * time.Second)).To(Succeed())
			})
		}
		Expect(err).NotTo(HaveOccurred(), "the hardened webhook never became ready")
		// Ready means the webhook serves; the secure metrics server starts
		// beside it and may still be setting up its authentication filter.
		metricsAddr := strings.TrimSuffix(strings.TrimPrefix(metricsURL, "https://"), "/metrics")
		Eventually(func() error {
			conn, err := net.DialTimeout("tcp", metricsAddr, time.Second)
			if err == nil {
				conn.Close()
			}
			return err
		}).WithTimeout(60*time.Second).Should(Succeed(), "the metrics server never listened on %s", metricsAddr)
	})

	Context("with --client-ca-file", func() {
		post := func(ctx context.Context, certs []tls.Certificate) (*admissionv1.AdmissionReview, error) {
			roots := x509.NewCertPool()
			Expect(roots.AppendCertsFromPEM(cp.Env.WebhookInstallOptions.LocalServingCAData)).To(BeTrue())
			hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs},
			}}
			pod := testbed.MakePod("forged", "victim").Image(reg.Host + "/" + multiImage + ":v1").Obj()
			raw, err := json.Marshal(pod)
			Expect(err).NotTo(HaveOccurred())
			review, err := json.Marshal(admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
				Request: &admissionv1.AdmissionRequest{
					UID: "forged", Namespace: "victim", Operation: admissionv1.Create,
					Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
					Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
					Object:   runtime.RawExtension{Raw: raw},
				},
			})
			Expect(err).NotTo(HaveOccurred())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost,
				"https://127.0.0.1:"+strconv.Itoa(clientCertPort)+"/mutate-v1-pod", bytes.NewReader(review))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			var out admissionv1.AdmissionReview
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return nil, fmt.Errorf("decode response (%s): %w", resp.Status, err)
			}
			return &out, nil
		}

		It("refuses an AdmissionReview POSTed without a client certificate in the TLS handshake", func(ctx SpecContext) {
			_, err := post(ctx, nil)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("tls"), "want a TLS handshake error")
		})

		It("answers the same POST made with the API server's client certificate", func(ctx SpecContext) {
			out, err := post(ctx, []tls.Certificate{apiServerCert})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Response).NotTo(BeNil())
			Expect(out.Response.UID).To(BeEquivalentTo("forged"))
			Expect(out.Response.Allowed).To(BeTrue())
		})

		It("admits pods the API server sends with its client certificate, and only those", func(ctx SpecContext) {
			// Each configuration reaches the hardened webhook, in a namespace
			// of its own that the suite's main webhook ignores. The API
			// server's kubeconfig names 127.0.0.1:<port> only, so through
			// localhost:<port> it has no client certificate to present.
			for _, host := range []string{"127.0.0.1", "localhost"} {
				ns := "clientcert-" + strings.ReplaceAll(host, ".", "-")
				ownNamespace(ctx, ns, "https://"+host+":"+strconv.Itoa(clientCertPort)+"/mutate-v1-pod", reg.Password, secretName)
			}

			By("the API server presenting its certificate to 127.0.0.1: the pod gets its affinity")
			Eventually(func(g Gomega) {
				pod := testbed.MakePod("with-cert", "clientcert-127-0-0-1").Image(reg.Host + "/" + multiImage + ":v1").Obj()
				created, _, err := createPod(ctx, pod)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(created.Spec.Affinity).NotTo(BeNil(), describe(created))
				g.Expect(created.Annotations).To(HaveKey(isa.DecisionAnnotation))
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

			By("the API server without a certificate for localhost: the handshake is refused")
			pod := testbed.MakePod("without-cert", "clientcert-localhost").Image(reg.Host + "/" + multiImage + ":v1").Obj()
			_, _, err := createPod(ctx, pod)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("failed calling webhook"))
		})
	})

	Context("metrics", func() {
		scrape := func(ctx context.Context, token string) (int, string) {
			hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				// The metrics server's certificate is self-signed.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			}}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
			Expect(err).NotTo(HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			return resp.StatusCode, string(body)
		}

		It("refuses unauthenticated and unauthorised scrapes and serves the metrics-reader", func(ctx SpecContext) {
			const ns = "metrics-scrapers"
			Expect(cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			allowed := serviceAccount(ctx, ns, "prometheus", metricsauth.DefaultAudience)
			denied := serviceAccount(ctx, ns, "stranger", metricsauth.DefaultAudience)
			apiServerToken := serviceAccount(ctx, ns, "prometheus")

			By("binding config/webhook's isamatch-metrics-reader to prometheus")
			objs := shippedObjects(ctx, filepath.Join("config", "webhook", "metrics-reader.yaml"))
			Expect(objs).To(HaveLen(1))
			create(ctx, objs[0])
			binding := &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "prometheus-isamatch"},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: objs[0].GetName()},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}},
			}
			Expect(cp.Client.Create(ctx, binding)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(cp.Client.Delete(ctx, binding)).To(Succeed()) })

			status, _ := scrape(ctx, "")
			Expect(status).To(Equal(http.StatusUnauthorized), "no token")
			status, body := scrape(ctx, "not-a-token")
			Expect(status).To(Equal(http.StatusUnauthorized), "a token the API server does not know")
			Expect(body).NotTo(ContainSubstring("isamatch_"))
			status, _ = scrape(ctx, apiServerToken)
			Expect(status).To(Equal(http.StatusUnauthorized), "a token for the API server, not for %s: a metrics endpoint that accepted it could replay it", metricsauth.DefaultAudience)
			status, _ = scrape(ctx, denied)
			Expect(status).To(Equal(http.StatusForbidden), "a ServiceAccount without metrics-reader")
			Eventually(func(g Gomega) {
				status, body := scrape(ctx, allowed)
				g.Expect(status).To(Equal(http.StatusOK), body)
				g.Expect(body).To(ContainSubstring("isamatch_"))
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		})
	})
})

var _ = Describe("The webhook's own configuration", Serial, func() {
	It("lets the webhook's ServiceAccount change only the caBundle of isamatch", func(ctx SpecContext) {
		const ns = "isamatch-system"
		err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		By("installing config/webhook's RBAC and the shipped configuration")
		for _, o := range shippedObjects(ctx, filepath.Join("config", "webhook", "rbac.yaml")) {
			create(ctx, o)
		}
		mwc, err := testbed.ShippedWebhookConfiguration(repoRoot)
		Expect(err).NotTo(HaveOccurred())
		Expect(cp.Client.Create(ctx, mwc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(cp.Client.Delete(ctx, mwc)).To(Succeed()) })

		cfg := rest.CopyConfig(cp.Config)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + ns + ":isamatch-webhook",
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		}
		asWebhook, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		Expect(err).NotTo(HaveOccurred())
		update := func(change func(w *admissionregistrationv1.MutatingWebhook)) error {
			var cur admissionregistrationv1.MutatingWebhookConfiguration
			if err := asWebhook.Get(ctx, client.ObjectKeyFromObject(mwc), &cur); err != nil {
				return err
			}
			change(&cur.Webhooks[0])
			return asWebhook.Update(ctx, &cur)
		}
		widenRules := func(w *admissionregistrationv1.MutatingWebhook) {
			w.Rules[0].Operations = append(w.Rules[0].Operations, admissionregistrationv1.Update)
		}
		dropSelector := func(w *admissionregistrationv1.MutatingWebhook) { w.NamespaceSelector = &metav1.LabelSelector{} }
		restore := func() {
			GinkgoHelper()
			var cur admissionregistrationv1.MutatingWebhookConfiguration
			Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(mwc), &cur)).To(Succeed())
			cur.Webhooks = mwc.Webhooks
			Expect(cp.Client.Update(ctx, &cur)).To(Succeed())
		}

		By("RBAC alone letting the webhook widen its own rules")
		// Another spec may have installed and deleted the same policy just
		// before: the API server stops enforcing it once its informer
		// sees the deletion, not at the deletion's response.
		Eventually(func() error { return update(widenRules) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		restore()

		By("installing config/webhook's ValidatingAdmissionPolicy")
		for _, o := range shippedObjects(ctx, filepath.Join("config", "webhook", "validatingadmissionpolicy.yaml")) {
			create(ctx, o)
		}
		const msg = "the isamatch webhook may only change clientConfig.caBundle of the MutatingWebhookConfiguration isamatch"
		Eventually(func() error { return update(widenRules) }).WithContext(ctx).WithTimeout(30*time.Second).
			Should(MatchError(ContainSubstring(msg)), "changing rules")
		Expect(update(dropSelector)).To(MatchError(ContainSubstring(msg)), "changing namespaceSelector")
		Expect(update(func(w *admissionregistrationv1.MutatingWebhook) {
			w.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		})).To(MatchError(ContainSubstring(msg)), "changing failurePolicy")

		By("the caBundle still changing")
		Expect(update(func(w *admissionregistrationv1.MutatingWebhook) {
			w.ClientConfig.CABundle = cp.Env.WebhookInstallOptions.LocalServingCAData
		})).To(Succeed())

		By("RBAC refusing every other configuration")
		var other admissionregistrationv1.MutatingWebhookConfiguration
		Expect(cp.Client.Get(ctx, client.ObjectKey{Name: envtestWebhookName}, &other)).To(Succeed())
		other.Webhooks[0].Rules[0].Operations = append(other.Webhooks[0].Rules[0].Operations, admissionregistrationv1.Update)
		Expect(apierrors.IsForbidden(asWebhook.Update(ctx, &other))).To(BeTrue())
	})
})

// serviceAccount creates ServiceAccount name in ns (if missing) and returns
// a token the API server issued for it, for audiences (none: the API
// server's own).
func serviceAccount(ctx context.Context, ns, name string, audiences ...string) string {
	GinkgoHelper()
	err := cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600), Audiences: audiences},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// shippedObjects reads every object of a multi-document manifest under the
// repository root, in the isamatch-system namespace when namespaced.
func shippedObjects(_ context.Context, path string) []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	Expect(err).NotTo(HaveOccurred())
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var o unstructured.Unstructured
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		if len(o.Object) == 0 {
			continue
		}
		objs = append(objs, &o)
	}
	return objs
}

// create creates o (namespaced objects in isamatch-system, where the
// shipped kustomization puts them) and deletes it when the spec ends.
func create(ctx context.Context, o *unstructured.Unstructured) {
	GinkgoHelper()
	if k := o.GetKind(); k == "Role" || k == "RoleBinding" {
		o.SetNamespace("isamatch-system")
	}
	Expect(cp.Client.Create(ctx, o)).To(Succeed(), "create %s %s", o.GetKind(), o.GetName())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(cp.Client.Delete(ctx, o))).To(Succeed()) })
}
