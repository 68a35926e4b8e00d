package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// countingAPIServer serves Secrets and ServiceAccounts over the API
// server's REST paths and counts the GETs by path.
type countingAPIServer struct {
	objects map[string]any // by path

	mu   sync.Mutex
	gets map[string]int
}

func (a *countingAPIServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	a.mu.Lock()
	a.gets[req.URL.Path]++
	a.mu.Unlock()
	obj, ok := a.objects[req.URL.Path]
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound})
		return
	}
	_ = json.NewEncoder(w).Encode(obj)
}

func (a *countingAPIServer) total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.gets {
		n += c
	}
	return n
}

// newCountingClient returns a clientset (JSON, no client-side rate limit)
// for an API server holding objs, and the server.
func newCountingClient(t *testing.T, objs ...any) (kubernetes.Interface, *countingAPIServer) {
	t.Helper()
	api := &countingAPIServer{objects: map[string]any{}, gets: map[string]int{}}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Secret:
			o.APIVersion, o.Kind = "v1", "Secret"
			api.objects["/api/v1/namespaces/"+o.Namespace+"/secrets/"+o.Name] = o
		case *corev1.ServiceAccount:
			o.APIVersion, o.Kind = "v1", "ServiceAccount"
			api.objects["/api/v1/namespaces/"+o.Namespace+"/serviceaccounts/"+o.Name] = o
		}
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return client, api
}

// TestPullSecretsNotAmplified: a pod naming one pull secret a thousand
// times costs one read of it (and one of its ServiceAccount), a second
// keychain for the namespace within the TTL costs none, and a pod naming
// more distinct secrets than the limit is refused before any read.
func TestPullSecretsNotAmplified(t *testing.T) {
	client, api := newCountingClient(t,
		dockerConfigSecret("pods", "good", "r.example", "bob", "hunter2"),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "pods", Name: "default"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "good"}, {Name: "good"}}})
	factory := KubernetesKeychain(client)
	dup := make([]string, 1000)
	for i := range dup {
		dup[i] = "good"
	}
	type result struct {
		Calls int
		Err   string
	}
	many := make([]string, MaxPullSecrets+1)
	for i := range many {
		many[i] = "s" + strings.Repeat("x", i)
	}
	steps := []struct {
		name    string
		auth    PullAuth
		wantErr string
		calls   int // API reads after the step, in all
	}{
		{name: "1000 duplicates", auth: PullAuth{Namespace: "pods", ImagePullSecrets: dup}, calls: 2},
		{name: "again within the TTL", auth: PullAuth{Namespace: "pods", ImagePullSecrets: dup}, calls: 2},
		{name: "more distinct than the limit", auth: PullAuth{Namespace: "pods", ImagePullSecrets: many},
			wantErr: "more than 32 distinct imagePullSecrets (33 names given); name at most 32", calls: 2},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			_, err := factory(t.Context(), s.auth)
			got := result{Calls: api.total()}
			if err != nil {
				got.Err = err.Error()
			}
			want := result{Calls: s.calls, Err: s.wantErr}
			if s.wantErr != "" && strings.Contains(got.Err, s.wantErr) {
				got.Err = s.wantErr
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("keychain (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPullSecretReadsRateLimited: one namespace's distinct secret names
// cost at most its burst of API reads before its reads wait (and fail at
// the deadline); another namespace is not slowed.
func TestPullSecretReadsRateLimited(t *testing.T) {
	client, api := newCountingClient(t)
	factory := KubernetesKeychain(client)
	for i := range 10 {
		names := make([]string, 10)
		for j := range names {
			names[j] = strings.Repeat("n", i+1) + strings.Repeat("m", j+1)
		}
		ctx, cancel := contextWithTimeout(t, 50)
		_, _ = factory(ctx, PullAuth{Namespace: "noisy", ImagePullSecrets: names})
		cancel()
	}
	if n := api.total(); n > pullSecretBurst+2 {
		t.Errorf("noisy namespace made %d API reads within a moment, want at most %d (burst) and a few refills", n, pullSecretBurst)
	}
	before := api.total()
	if _, err := factory(t.Context(), PullAuth{Namespace: "quiet", ImagePullSecrets: []string{"a"}}); err != nil {
		t.Fatalf("quiet namespace: %v", err)
	}
	if n := api.total() - before; n != 2 {
		t.Errorf("quiet namespace made %d API reads, want 2", n)
	}
}

// contextWithTimeout is t's context ending after ms milliseconds.
func contextWithTimeout(t *testing.T, ms int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), time.Duration(ms)*time.Millisecond)
}
