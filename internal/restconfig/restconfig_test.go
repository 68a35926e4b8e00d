package restconfig

import (
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestLoadAsksForUncompressedResponses sends a list and a watch of pods
// through a client built from Load and checks what the server was asked:
// no gzip, which Go's transport would otherwise request on every call.
func TestLoadAsksForUncompressedResponses(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	// TLS, as every API server serves: client-go gives a configuration
	// without TLS Go's default transport, whatever it asks.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.RawQuery] = r.Header.Get("Accept-Encoding")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			return // a watch that ends at once
		}
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	body := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + ", certificate-authority-data: " + ca + "}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list pods: %v", err)
	}
	w, err := cs.CoreV1().Pods("").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	w.Stop()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the server saw %d distinct requests (%v), want a list and a watch", len(seen), seen)
	}
	for query, enc := range seen {
		if strings.Contains(enc, "gzip") {
			t.Errorf("request ?%s asked for Accept-Encoding %q; want responses uncompressed", query, enc)
		}
	}
}

func TestLoadNamesAMissingKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load(%s) = %v; want an error naming the file", path, err)
	}
}
