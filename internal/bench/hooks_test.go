package bench

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestNoopConfiguration checks that the floor's configuration is the
// shipped one but for where it sends and which namespaces it sees.
func TestHookConfiguration(t *testing.T) {
	root, err := testbed.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := testbed.ShippedWebhookConfiguration(root)
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://127.0.0.1:1234/mutate-v1-pod"
	got := HookConfiguration(shipped, Noop, url, []byte("CA"))

	want := shipped.DeepCopy()
	want.Name = "bench-noop"
	w := &want.Webhooks[0]
	w.Name = "noop." + w.Name
	w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr(url), CABundle: []byte("CA")}
	var exprs []metav1.LabelSelectorRequirement
	for _, r := range w.NamespaceSelector.MatchExpressions {
		if r.Key != isa.IgnoreLabel {
			exprs = append(exprs, r)
		}
	}
	w.NamespaceSelector.MatchExpressions = append(exprs, metav1.LabelSelectorRequirement{Key: HookLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"noop"}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HookConfiguration (-want +got):\n%s", diff)
	}
	if len(exprs) == len(shipped.Webhooks[0].NamespaceSelector.MatchExpressions) {
		t.Errorf("the shipped namespaceSelector has no %s expression: the no-op configuration would overlap isamatch's", isa.IgnoreLabel)
	}
	if shipped.Webhooks[0].ClientConfig.Service == nil {
		t.Error("HookConfiguration changed the shipped configuration it was given")
	}
}

func ptr[T any](v T) *T { return &v }

// TestNoopWebhookProcess builds the no-op webhook, starts it as the bench
// does, sends it one AdmissionReview over TLS and checks that it allows
// the pod with no patch and counts the request in its metrics, and that
// its annotate path adds the one annotation.
func TestNoopWebhookProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a binary")
	}
	root, err := testbed.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bins, err := gobuild.Binaries(t.Context(), root, dir, gobuild.Options{}, "./internal/bench/noopwebhook")
	if err != nil {
		t.Fatal(err)
	}
	wio := &envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"}
	if err := wio.PrepWithoutInstalling(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wio.Cleanup() })
	// The manager needs a kubeconfig; nothing here makes it call the
	// server, which does not exist.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := StartNoopWebhook(t.Context(), bins[0], kubeconfig, wio.LocalServingCertDir, filepath.Join(dir, "noop.log"), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Process.Stop(10 * time.Second) })

	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("u-1"), Operation: admissionv1.Create, Namespace: "ns",
			Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Object:   runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"img"}]}}`)},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(wio.LocalServingCAData)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	post := func(path string) *admissionv1.AdmissionResponse {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.URL(path), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatalf("%s: decode the response (status %s): %v", path, resp.Status, err)
		}
		if got.Response == nil || got.Response.UID != "u-1" || !got.Response.Allowed {
			t.Fatalf("%s: response %+v: want uid u-1, allowed", path, got.Response)
		}
		return got.Response
	}
	if got := post("/mutate-v1-pod"); got.Patch != nil || got.PatchType != nil {
		t.Errorf("response %+v: want no patch", got)
	}
	// The annotate path, always served, adds the bench's annotation: this
	// ties AnnotatePath and AnnotateKey to the binary's own.
	got := post(AnnotatePath)
	if got.PatchType == nil || *got.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("%s: patch type %v, want JSONPatch", AnnotatePath, got.PatchType)
	}
	p, err := jsonpatch.DecodePatch(got.Patch)
	if err != nil {
		t.Fatalf("%s: decode the patch %s: %v", AnnotatePath, got.Patch, err)
	}
	out, err := p.Apply(review.Request.Object.Raw)
	if err != nil {
		t.Fatalf("%s: apply %s: %v", AnnotatePath, got.Patch, err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{AnnotateKey: AnnotateValue}, pod.Annotations); diff != "" {
		t.Errorf("%s: annotations of the patched pod (-want +got):\n%s", AnnotatePath, diff)
	}
	calls, err := webhookRequests(t.Context(), n.MetricsAddr, "/mutate-v1-pod")
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("controller_runtime_webhook_requests_total = %v, want 1", calls)
	}
}
