package webhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

// A webhook of its own, without --pull-secrets, gets its registry
// credentials from kubelet image credential provider plugins
// (internal/testbed/testcredprovider, run through the real exec protocol):
// "test-provider" answers reg's account for reg, "garbage" prints text for
// origin. Its pods are in a namespace the suite's main webhook ignores and
// that holds no pull secret.
var _ = Describe("Registry credentials from image credential provider plugins", Ordered, func() {
	const ns = "credential-providers"
	var metricsURL string
	BeforeAll(func(ctx SpecContext) {
		work := GinkgoT().TempDir()
		By("building the test plugin into a bin dir, as two providers")
		bins, err := gobuild.Binaries(ctx, repoRoot, work, gobuild.Options{}, "./internal/testbed/testcredprovider")
		Expect(err).NotTo(HaveOccurred())
		binDir := filepath.Join(work, "plugins")
		Expect(os.Mkdir(binDir, 0o755)).To(Succeed())
		for _, name := range []string{"test-provider", "garbage"} {
			Expect(os.Link(bins[0], filepath.Join(binDir, name))).To(Succeed())
		}
		config := filepath.Join(work, "credential-providers.yaml")
		Expect(os.WriteFile(config, fmt.Appendf(nil, `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: test-provider
    matchImages: [%q]
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args: [--mode=ok]
    env:
      - {name: TEST_USERNAME, value: %q}
      - {name: TEST_PASSWORD, value: %q}
  - name: garbage
    matchImages: [%q]
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args: [--mode=garbage]
`, reg.Host, reg.Username, reg.Password, origin.Host), 0o600)).To(Succeed())
		caFile := filepath.Join(work, "registries-ca.pem")
		Expect(os.WriteFile(caFile, append(append([]byte{}, reg.CAPEM...), origin.CAPEM...), 0o600)).To(Succeed())

		By("starting the webhook with credentialProviders.config and binDir")
		metricsURL = startOwnWebhook(ctx, ns, func(c *v1alpha1.WebhookConfiguration) {
			c.Registry.CAFile = caFile
			c.Registry.AllowRegistries = []string{reg.Host, origin.Host}
			c.CredentialProviders.Config, c.CredentialProviders.BinDir = config, binDir
			c.CredentialProviders.Timeout = metav1.Duration{Duration: 20 * time.Second}
		}).metricsURL
	})

	It("resolve an image only the plugin's credentials can read, with no pull secret", func(ctx SpecContext) {
		// The API server may take a moment to see the new configuration.
		Eventually(func(g Gomega) {
			pod := testbed.MakePod("private-"+strconv.FormatInt(time.Now().UnixNano(), 36), ns).Image(reg.Ref(saImage, "v1")).Obj()
			created, warnings, err := createPod(ctx, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(created.Annotations).To(HaveKey(isa.DecisionAnnotation), "admitted by the credential-providers webhook")
			g.Expect(warnings).To(BeEmpty(), describe(created))
			g.Expect(archesOf(requiredTerms(created))).To(Equal([]string{"arm64"}), describe(created))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	})

	It("name a plugin that answers garbage in the warning, and admit the pod without that image's constraint", func(ctx SpecContext) {
		pod := testbed.MakePod("garbage", ns).Image(origin.Ref(originOnlyImage, "v1")).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ContainElement(And(
			ContainSubstring(origin.Ref(originOnlyImage, "v1")),
			ContainSubstring("credential provider garbage: stdout is not a JSON CredentialProviderResponse"),
		)), describe(created))
		Expect(requiredTerms(created)).To(BeEmpty(), describe(created))
	})

	It("count each plugin run by provider and result: one per resolution, its answer cached", func(ctx SpecContext) {
		// test-provider's answer (cacheKeyType Registry) serves every later
		// pod; garbage failed its one resolution once, not again for the
		// manifest GET after its HEAD.
		text := scrapeMetricsAt(ctx, metricsURL)
		for _, tc := range []struct {
			provider, result string
			want             float64
		}{
			{"test-provider", "ok", 1},
			{"garbage", "error", 1},
		} {
			v, ok, err := testbed.MetricValue(text, "isamatch_registry_credential_provider_runs_total", map[string]string{"provider": tc.provider, "result": tc.result})
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue(), "no runs_total{provider=%q,result=%q} in the webhook's metrics", tc.provider, tc.result)
			Expect(v).To(Equal(tc.want), "runs of %s with result %s", tc.provider, tc.result)
		}
	})
})
