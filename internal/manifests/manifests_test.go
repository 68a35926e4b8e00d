package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRBAC(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update"}, ResourceNames: []string{"cert"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"update"}, ResourceNames: []string{"a", "b"}},
	}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"every verb granted", Allows(rules, "", "pods", "get", "list"), true},
		{"one verb missing", Allows(rules, "", "pods", "get", "watch"), false},
		{"other group", Allows(rules, "apps", "pods", "get"), false},
		{"named only", OnlyNamed(rules, "", "secrets", "update", "cert"), true},
		{"another name", OnlyNamed(rules, "", "secrets", "update", "other"), false},
		{"not restricted to one name", OnlyNamed(rules, "apps", "deployments", "update", "a"), false},
		{"not granted at all", OnlyNamed(rules, "", "secrets", "delete", "cert"), false},
		{"unrestricted grant", OnlyNamed(rules, "", "pods", "get", "p"), false},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestRender renders a tree with a component through a real kubectl.
func TestRender(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config/kustomization.yaml", "resources:\n  - ns.yaml\n")
	write("config/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: base\n")
	write("config/components/extra/kustomization.yaml",
		"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - sa.yaml\n")
	write("config/components/extra/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: extra\n  namespace: base\n")

	objs, err := Render(t.Context(), t.TempDir(), filepath.Join(root, "config"), "components/extra")
	if errors.Is(err, ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	nsName := func(n *corev1.Namespace) string { return n.Name }
	saName := func(s *corev1.ServiceAccount) string { return s.Name }
	if got := len(Named(objs, "base", nsName)); got != 1 {
		t.Errorf("namespaces named base: %d, want 1", got)
	}
	if got := len(Named(objs, "extra", saName)); got != 1 {
		t.Errorf("service accounts named extra: %d, want 1", got)
	}
	base, err := Render(t.Context(), t.TempDir(), filepath.Join(root, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(0, len(Named(base, "extra", saName))); diff != "" {
		t.Errorf("without the component (-want +got):\n%s", diff)
	}
	if _, err := Render(t.Context(), t.TempDir(), filepath.Join(root, "config"), "components/missing"); err == nil {
		t.Error("a missing component rendered without error")
	}
}
