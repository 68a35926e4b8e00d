package main

import (
	"flag"
	"io"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/isamatch/isamatch/internal/manifests"
)

// TestEvictMisplacedComponent renders config with the evict-misplaced
// component: the webhook's args turn the remedy on (and parse), and its
// ServiceAccount may create evictions, nothing more.
func TestEvictMisplacedComponent(t *testing.T) {
	objs := renderWithComponents(t, "evict-misplaced")
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, shippedArgs(t, objs, dep))
	if err != nil {
		t.Fatalf("Deployment args do not parse: %v", err)
	}
	if !o.evictMisplaced || !o.misplaceEvents {
		t.Errorf("--evict-misplaced %v, --misplacement-events %v: want both on", o.evictMisplaced, o.misplaceEvents)
	}
	cr := find(t, objs, ServiceName+"-evict", func(r *rbacv1.ClusterRole) string { return r.Name })
	crb := find(t, objs, ServiceName+"-evict", func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
	if !manifests.Allows(cr.Rules, "", "pods/eviction", "create") || manifests.Allows(cr.Rules, "", "pods", "delete") || len(cr.Rules) != 1 {
		t.Errorf("ClusterRole %s rules %+v: want create on pods/eviction only", cr.Name, cr.Rules)
	}
	sa := dep.Spec.Template.Spec.ServiceAccountName
	if crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 || crb.Subjects[0].Name != sa || crb.Subjects[0].Namespace != dep.Namespace {
		t.Errorf("ClusterRoleBinding %+v does not bind %s to the webhook's ServiceAccount %s/%s", crb, cr.Name, dep.Namespace, sa)
	}
}
