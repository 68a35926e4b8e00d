package main

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/internal/memlimit"
)

// The shipped Deployment makes the memory request the soft limit, under
// the memory limit, and sets no GOMEMLIMIT that would override it.
func TestShippedMemoryTarget(t *testing.T) {
	objs := renderConfig(t)
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	c := dep.Spec.Template.Spec.Containers[0]
	env, err := manifests.ResolvedEnv(c)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if _, ok := vars[memlimit.RequestEnv]; !ok {
		t.Fatalf("the webhook container's env %q has no %s", env, memlimit.RequestEnv)
	}
	got, err := memlimit.Target(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	if got != req.Value() || got == 0 {
		t.Errorf("soft memory limit %d, want the memory request %s (%d)", got, req, req.Value())
	}
	if lim.IsZero() || got >= lim.Value() {
		t.Errorf("soft memory limit %d, want it under the memory limit %s", got, lim)
	}
}
