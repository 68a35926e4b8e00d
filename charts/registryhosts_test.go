package charts

import (
	"strings"
	"testing"
)

// TestRegistryHostsFiles: the chart's own hosts.toml files each become a
// key of the ConfigMap and an item of the webhook's volume at
// <directory>/hosts.toml, containerd's layout, and the component's drop-in
// points the webhook there.
func TestRegistryHostsFiles(t *testing.T) {
	files := map[string]any{
		"docker.io":            "server = \"https://registry-1.docker.io\"\n[host.\"https://mirror.internal\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"registry.local_5000_": "server = \"https://registry.local:5000\"\n",
	}
	manifest, _ := renderChart(t, map[string]any{"webhook": map[string]any{"registryHosts": map[string]any{"enabled": true, "files": files}}})
	var cm, dropIns, dep string
	for key, obj := range objects(t, manifest) {
		switch {
		case strings.HasPrefix(key, "v1 ConfigMap isamatch-system/isamatch-registry-hosts-"):
			cm = obj
		case key == "v1 ConfigMap isamatch-system/isamatch-webhook-config-d-HASH":
			dropIns = obj
		case key == "apps/v1 Deployment isamatch-system/isamatch-webhook":
			dep = obj
		}
	}
	if cm == "" || dropIns == "" || dep == "" {
		t.Fatalf("no registry-hosts ConfigMap, drop-ins ConfigMap or webhook Deployment rendered:\n%s", manifest)
	}
	if want := `"50-registry-hosts.yaml":`; !strings.Contains(dropIns, want) || !strings.Contains(dropIns, `hostsDir: /etc/isamatch/registry-hosts`) {
		t.Errorf("the drop-ins ConfigMap lacks %s with registry.hostsDir /etc/isamatch/registry-hosts:\n%s", want, dropIns)
	}
	for _, want := range []string{`"docker.io":"server = \"https://registry-1.docker.io\"`, `"registry.local_5000_":"server = \"https://registry.local:5000\"\n"`} {
		if !strings.Contains(cm, want) {
			t.Errorf("ConfigMap lacks %s:\n%s", want, cm)
		}
	}
	for _, want := range []string{
		`{"key":"docker.io","path":"docker.io/hosts.toml"}`,
		`{"key":"registry.local_5000_","path":"registry.local_5000_/hosts.toml"}`,
		`"mountPath":"/etc/isamatch/registry-hosts"`,
	} {
		if !strings.Contains(dep, want) {
			t.Errorf("webhook Deployment lacks %s:\n%s", want, dep)
		}
	}
}
