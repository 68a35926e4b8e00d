package webhook

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

// rateLimiter is reg behind a proxy that, while limiting, answers every
// manifest request 429 Too Many Requests with a Retry-After, as Docker
// Hub does past its pull limit; it counts the manifest requests it sees.
type rateLimiter struct {
	srv        *httptest.Server
	limiting   atomic.Bool
	manifests  atomic.Int64
	retryAfter time.Duration
}

func newRateLimiter(retryAfter time.Duration) *rateLimiter {
	GinkgoHelper()
	target, err := url.Parse("https://" + reg.Host)
	Expect(err).NotTo(HaveOccurred())
	l := &rateLimiter{retryAfter: retryAfter}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
			r.Out.SetBasicAuth(reg.Username, reg.Password)
		},
		Transport: reg.Transport(),
	}
	l.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			l.manifests.Add(1)
			if l.limiting.Load() {
				w.Header().Set("Retry-After", strconv.Itoa(int(l.retryAfter.Seconds())))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}`))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	l.srv.StartTLS()
	DeferCleanup(l.srv.Close)
	return l
}

// host is the proxy's host:port, the registry part of its references.
func (l *rateLimiter) host() string { return strings.TrimPrefix(l.srv.URL, "https://") }

var _ = Describe("A registry answering 429 Too Many Requests", Ordered, func() {
	const ns = "rate-limited"
	// Long enough that the second pod is admitted well within it on any
	// machine, short enough to wait out.
	const retryAfter = 30 * time.Second
	var (
		limiter    *rateLimiter
		metricsURL string
		image      string
	)
	BeforeAll(func(ctx SpecContext) {
		limiter = newRateLimiter(retryAfter)
		image = limiter.host() + "/" + amdImage + ":v1"
		caFile := filepath.Join(GinkgoT().TempDir(), "ca.pem")
		proxyCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: limiter.srv.Certificate().Raw})
		Expect(os.WriteFile(caFile, proxyCA, 0o600)).To(Succeed())
		metricsURL = startOwnWebhook(ctx, ns, func(c *v1alpha1.WebhookConfiguration) {
			c.Registry.CAFile, c.Registry.AllowRegistries = caFile, []string{limiter.host()}
		}).metricsURL
	})

	rateLimited := func(ctx SpecContext) float64 {
		GinkgoHelper()
		v, _, err := testbed.MetricValue(scrapeMetricsAt(ctx, metricsURL), "isamatch_registry_errors_total", map[string]string{"kind": "rateLimited"})
		Expect(err).NotTo(HaveOccurred())
		return v
	}

	It("admits the pod with a warning, counts the 429 apart, and does not ask the registry again before its Retry-After", func(ctx SpecContext) {
		limiter.limiting.Store(true)
		By("a first pod: the registry answers 429")
		// The API server may take a moment to call the new configuration.
		Eventually(func(g Gomega) {
			pod := testbed.MakePod("limited-"+strconv.FormatInt(time.Now().UnixNano(), 36), ns).Image(image).Obj()
			created, warnings, err := createPod(ctx, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(created.Annotations).To(HaveKey(isa.DecisionAnnotation), "admitted by the %s webhook", ns)
			g.Expect(warnings).To(ContainElement(ContainSubstring(image)), describe(created))
			g.Expect(requiredTerms(created)).To(BeEmpty(), describe(created))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		asked := limiter.manifests.Load()
		Expect(asked).To(BeNumerically(">", 0))
		Expect(rateLimited(ctx)).To(BeNumerically(">=", 1), "isamatch_registry_errors_total{kind=\"rateLimited\"}")

		By("a second pod within the Retry-After: refused by the webhook's memory, the registry not asked")
		pod := testbed.MakePod("limited-again", ns).Image(image).Obj()
		created, warnings, err := createPod(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ContainElement(And(ContainSubstring(image), ContainSubstring("429 Too Many Requests; not asked again before"))), describe(created))
		Expect(limiter.manifests.Load()).To(Equal(asked), "manifest requests to the rate-limited registry")
		Expect(rateLimited(ctx)).To(BeNumerically(">=", 2), "isamatch_registry_errors_total{kind=\"rateLimited\"}")
	})

	It("resolves the image again once the Retry-After has passed and the registry answers", func(ctx SpecContext) {
		limiter.limiting.Store(false)
		Eventually(func(g Gomega) {
			pod := testbed.MakePod("recovered-"+strconv.FormatInt(time.Now().UnixNano(), 36), ns).Image(image).Obj()
			created, warnings, err := createPod(ctx, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(warnings).To(BeEmpty(), describe(created))
			g.Expect(archesOf(requiredTerms(created))).To(Equal([]string{"amd64"}), describe(created))
		}).WithContext(ctx).WithTimeout(3 * retryAfter).WithPolling(2 * time.Second).Should(Succeed())
	})
})
