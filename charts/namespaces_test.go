package charts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNamespacesRenamed: both install paths put isamatch in namespaces of
// the user's choice, and nothing that matters still names the shipped ones.
// The chart takes namespaces.webhook and namespaces.labeler; kustomize takes
// an overlay with namespace: over each part (config/webhook,
// config/daemonset), as docs/install.md shows.
func TestNamespacesRenamed(t *testing.T) {
	const webhookNS, labelerNS = "platform-isa", "platform-isa-labeler"
	root := t.TempDir()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	write := func(dir, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "kustomization.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(dir, target string) string {
		r, err := filepath.Rel(filepath.Join(root, dir), abs(target))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	write("webhook", "namespace: "+webhookNS+"\nresources:\n  - "+rel("webhook", filepath.Join(configDir, "webhook"))+"\n")
	write("labeler", "namespace: "+labelerNS+"\nresources:\n  - "+rel("labeler", filepath.Join(configDir, "daemonset"))+"\n")
	write("cluster", "resources:\n  - ../webhook\n  - ../labeler\n")
	kust := kustomizeDir(t, filepath.Join(root, "cluster"))
	manifest, hooks := renderChart(t, map[string]any{"namespaces": map[string]any{"webhook": webhookNS, "labeler": labelerNS}})

	sameObjects(t, "the chart with namespaces set", manifest, "config/ overlaid with namespace:", kust)

	var hookText strings.Builder
	for _, h := range hooks {
		hookText.WriteString(h.Manifest + "\n---\n")
	}
	// Where a namespace is named: an object's own, a ServiceAccount
	// subject's, a Service reference's, a ServiceAccount user name, a DNS
	// name, a flag. The labeler's namespace shares its name with its
	// objects, so only these forms count for it.
	stale := regexp.MustCompile(`isamatch-system|namespace"?: "?isamatch-labeler\b|serviceaccount:isamatch-labeler:|\bisamatch-labeler/`)
	for name, text := range map[string]string{"kustomize": kust, "chart": manifest, "chart hooks": hookText.String()} {
		for _, m := range stale.FindAllStringIndex(text, -1) {
			lo, hi := max(0, m[0]-80), min(len(text), m[1]+80)
			t.Errorf("%s still names a shipped namespace: ...%s...", name, text[lo:hi])
		}
	}
	for key, obj := range objects(t, manifest) {
		if strings.Contains(key, " "+webhookNS+"/") || strings.Contains(key, " "+labelerNS+"/") || strings.Contains(key, " <nil>/") {
			continue
		}
		t.Errorf("%s is in neither %s nor %s: %s", key, webhookNS, labelerNS, obj)
	}
}
