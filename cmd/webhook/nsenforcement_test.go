package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/isa"
)

// nsReader serves namespaces' labels, counting the reads; a namespace
// without an entry is refused as RBAC would.
type nsReader struct {
	labels map[string]string
	gets   atomic.Int32
	delay  time.Duration
}

func (r *nsReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets.Add(1)
	time.Sleep(r.delay)
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != corev1.SchemeGroupVersion.WithKind("Namespace") {
		return errors.New("no kind " + gvk.String() + " is served")
	}
	v, ok := r.labels[key.Name]
	if !ok {
		return errors.New(`namespaces "` + key.Name + `" is forbidden`)
	}
	obj.(*metav1.PartialObjectMetadata).SetLabels(map[string]string{isa.EnforcementLabel: v})
	return nil
}

func (r *nsReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not listed")
}

// TestNSLabels: a namespace's label is read once per nsLabelTTL however
// many pods ask at once, a changed label is seen after it, and a namespace
// that cannot be read keeps the cluster's mode without a read per pod.
func TestNSLabels(t *testing.T) {
	r := &nsReader{labels: map[string]string{"team-a": "warn"}, delay: 20 * time.Millisecond}
	l := newNSLabels(r)
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := l.enforcement(t.Context(), "team-a"); got != "warn" {
				t.Errorf("enforcement(team-a) = %q, want warn", got)
			}
		}()
	}
	wg.Wait()
	if n := r.gets.Load(); n != 1 {
		t.Errorf("20 pods at once read the namespace %d times, want 1", n)
	}

	r.labels["team-a"] = "deny"
	now = now.Add(nsLabelTTL - time.Second)
	if got := l.enforcement(t.Context(), "team-a"); got != "warn" {
		t.Errorf("within the TTL: %q, want the remembered warn", got)
	}
	now = now.Add(2 * time.Second)
	if got := l.enforcement(t.Context(), "team-a"); got != "deny" {
		t.Errorf("past the TTL: %q, want the changed deny", got)
	}

	before := r.gets.Load()
	for range 5 {
		if got := l.enforcement(t.Context(), "locked"); got != "" {
			t.Errorf("unreadable namespace: %q, want none", got)
		}
	}
	if n := r.gets.Load() - before; n != 1 {
		t.Errorf("an unreadable namespace was read %d times for 5 pods, want 1", n)
	}
}
