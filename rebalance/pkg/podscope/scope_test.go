package podscope

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"
)

// TestCopy: the copies share no memory with the arguments, and nil stays nil.
func TestCopy(t *testing.T) {
	ns := &api.Namespaces{Include: []string{"a"}, Exclude: []string{"b"}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	nsCopy, selCopy := Copy(ns, sel)
	if diff := cmp.Diff(ns, nsCopy); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sel, selCopy); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	nsCopy.Include[0] = "changed"
	selCopy.MatchLabels["app"] = "changed"
	if ns.Include[0] != "a" || sel.MatchLabels["app"] != "x" {
		t.Errorf("changing the copies changed the originals: %v %v", ns, sel)
	}
	if n, s := Copy(nil, nil); n != nil || s != nil {
		t.Errorf("Copy(nil, nil) = %v, %v, want nil, nil", n, s)
	}
}
