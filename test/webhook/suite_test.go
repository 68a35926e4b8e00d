package webhook

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/test/framework"
)

func TestWebhook(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "Webhook suite")
}

var (
	cp  *testbed.ControlPlane
	reg *testbed.Registry
	// origin is a second registry whose images the webhook resolves
	// through reg, its mirror (--registry-mirror), falling back to origin.
	origin *testbed.Registry
	// hostsDirRegistry exists only in the webhook's --registry-hosts-dir,
	// whose hosts.toml names reg as its one mirror.
	hostsDirRegistry = "registry.isamatch.test"
	// webhookBin is cmd/webhook built for the suite; webhookProc serves the
	// API server.
	webhookBin  string
	webhookProc *testbed.Process
	// metricsURL is the webhook's Prometheus endpoint; webhookAddr its
	// HTTPS host:port.
	metricsURL  string
	webhookAddr string
	// repoRoot is the module root.
	repoRoot string
)

// The images the suite pushes.
var (
	multiImage = "app/multi"   // index: linux/riscv64 rva23u64 + linux/amd64 v3 + an attestation
	amdImage   = "app/amd64"   // single manifest linux/amd64
	rvvImage   = "app/rvv"     // single manifest linux/riscv64 with LABEL isa.request=rv64gcv
	saImage    = "app/private" // single manifest linux/arm64, pulled with the ServiceAccount's secret
	// originOnlyImage is in origin only (linux/riscv64).
	originOnlyImage = "app/origin-only"
)

// nodeISAs are the simulated nodes and the ISA their labels describe.
var nodeISAs = map[string]string{
	"rv-rva23":  "rva23u64",
	"rv-gcv":    "rv64gcv",
	"x86-v3":    "x86-64-v3",
	"arm64-one": "arm64",
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	work := GinkgoT().TempDir()

	By("building cmd/webhook")
	bins, err := gobuild.Binaries(ctx, repoRoot, work, gobuild.Options{}, "./cmd/webhook")
	Expect(err).NotTo(HaveOccurred())
	webhookBin = bins[0]

	By("starting docker-registry with TLS and htpasswd")
	reg = framework.RequireRegistry(ctx, testbed.RegistryOptions{})
	pushImages(ctx)
	By("starting a second docker-registry, mirrored by the first")
	origin = framework.RequireRegistry(ctx, testbed.RegistryOptions{Username: reg.Username, Password: reg.Password})
	_, err = testbed.PushImage(ctx, origin, originOnlyImage, "v1", testbed.Platform{Arch: "riscv64"})
	Expect(err).NotTo(HaveOccurred())
	caFile := filepath.Join(work, "registries-ca.pem")
	Expect(os.WriteFile(caFile, append(append([]byte{}, reg.CAPEM...), origin.CAPEM...), 0o600)).To(Succeed())

	By("writing a containerd hosts directory mirroring " + hostsDirRegistry + " by the first")
	hostsDir := writeHostsDir(work)

	By("starting the control plane with the shipped MutatingWebhookConfiguration")
	hook, err := testbed.EnvtestWebhookConfiguration(repoRoot)
	Expect(err).NotTo(HaveOccurred())
	hook.Name = envtestWebhookName
	// The API server presents a client certificate to the webhook of the
	// client-certificate specs (endpoint_test.go) through its
	// AdmissionConfiguration.
	admissionConfig := setUpAPIServerClientCert(work)
	cp, err = testbed.Start(ctx, testbed.Options{
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hook},
		},
		APIServerFlags: map[string][]string{"admission-control-config-file": {admissionConfig}},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cp.Stop()).To(Succeed()) })

	By("creating labelled nodes")
	for name, s := range nodeISAs {
		i, err := isa.Parse(s)
		Expect(err).NotTo(HaveOccurred(), "parse node ISA %q", s)
		node := testbed.MakeNode(name).Arch(string(i.Arch)).Labels(isa.NodeLabels(i, nil)).Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
	}

	By("starting the webhook binary")
	wio := cp.Env.WebhookInstallOptions
	webhookAddr = net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
		Bin: webhookBin, CP: cp, RegistryCA: caFile, Log: filepath.Join(work, "webhook.log"),
		Verbose: true,
		Configure: func(c *v1alpha1.WebhookConfiguration) {
			c.Admission.Budget = metav1.Duration{Duration: 5 * time.Second}
			c.Registry.AllowRegistries = []string{reg.Host, origin.Host}
			c.Registry.Mirrors = []string{origin.Host + "=" + reg.Host}
			c.Registry.HostsDir = hostsDir
		},
	})
	webhookProc = w.Process
	if webhookProc != nil {
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry("webhook log", webhookProc.LogTail(60))
			}
			Expect(webhookProc.Stop(10 * time.Second)).To(Succeed())
		})
	}
	Expect(err).NotTo(HaveOccurred(), "the webhook never became ready")
	metricsURL = "http://" + w.MetricsAddr + "/metrics"
}, NodeTimeout(5*time.Minute))

// writeHostsDir writes, under work, a containerd config_path whose
// hosts.toml sends hostsDirRegistry's images to reg, trusting reg's CA
// through a ca file beside it (a path relative to the file), and returns
// it.
func writeHostsDir(work string) string {
	GinkgoHelper()
	dir := filepath.Join(work, "certs.d")
	regDir := filepath.Join(dir, hostsDirRegistry)
	Expect(os.MkdirAll(regDir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(regDir, "reg-ca.pem"), reg.CAPEM, 0o600)).To(Succeed())
	toml := fmt.Sprintf("[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"reg-ca.pem\"\n", "https://"+reg.Host)
	Expect(os.WriteFile(filepath.Join(regDir, "hosts.toml"), []byte(toml), 0o600)).To(Succeed())
	return dir
}

// envtestWebhookName is the name the shipped configuration is installed
// under, so that "isamatch" itself stays free for the kubectl dry-run and
// the certificate rotation specs.
const envtestWebhookName = "isamatch-envtest"

func pushImages(ctx context.Context) {
	GinkgoHelper()
	_, err := testbed.PushIndex(ctx, reg, multiImage, "v1", []testbed.Platform{
		{Arch: "riscv64", Variant: "rva23u64"},
		{Arch: "amd64", Variant: "v3"},
		{OS: "unknown", Arch: "unknown"},
	})
	Expect(err).NotTo(HaveOccurred())
	_, err = testbed.PushImage(ctx, reg, amdImage, "v1", testbed.Platform{Arch: "amd64"})
	Expect(err).NotTo(HaveOccurred())
	_, err = testbed.PushImage(ctx, reg, rvvImage, "v1", testbed.Platform{Arch: "riscv64", Labels: map[string]string{isa.BareImageRequestLabel: "rv64gcv"}})
	Expect(err).NotTo(HaveOccurred())
	_, err = testbed.PushImage(ctx, reg, saImage, "v1", testbed.Platform{Arch: "arm64"})
	Expect(err).NotTo(HaveOccurred())
}

// scrapeMetrics returns the webhook's Prometheus text.
func scrapeMetrics(ctx context.Context) string {
	GinkgoHelper()
	return scrapeMetricsAt(ctx, metricsURL)
}

// scrapeMetricsAt returns the Prometheus text at url.
func scrapeMetricsAt(ctx context.Context, url string) string {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "metrics: %s", body)
	return string(body)
}

// describe is a readable one-liner for failure messages.
func describe(pod *corev1.Pod) string {
	aff := "none"
	if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
		b, _ := yaml.Marshal(pod.Spec.Affinity.NodeAffinity)
		aff = string(b)
	}
	return fmt.Sprintf("pod %s/%s decision %q affinity:\n%s", pod.Namespace, pod.Name, pod.Annotations[isa.DecisionAnnotation], aff)
}
