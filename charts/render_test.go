package charts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/charts/render"
	"github.com/isamatch/isamatch/internal/manifests"
)

// chartDir and configDir are the chart and the kustomize tree it is made of.
var (
	chartDir  = filepath.Join("isamatch")
	configDir = filepath.Join("..", "config")
)

// kubeVersion is the Kubernetes release the chart is rendered for: the one
// the suites run (hack/controlplane/go.mod).
var kubeVersion = common.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}

// loadChart loads charts/isamatch as helm install does from a directory.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load %s: %v", chartDir, err)
	}
	return ch
}

// render is `helm install --dry-run=client` of the chart with vals: the
// release's manifest (hooks apart) and its hooks.
func renderChart(t *testing.T, vals map[string]any) (manifest string, hooks []*release.Hook) {
	t.Helper()
	rel, err := renderRelease(t, vals)
	if err != nil {
		t.Fatalf("render the chart with %v: %v", vals, err)
	}
	return rel.Manifest, rel.Hooks
}

func renderRelease(t *testing.T, vals map[string]any) (*release.Release, error) {
	t.Helper()
	return render.Chart(t.Context(), loadChart(t), vals, kubeVersion)
}

// kustomize renders config/ with the named components of config/components
// as `kubectl kustomize` does.
func kustomize(t *testing.T, components ...string) string {
	t.Helper()
	paths := make([]string, len(components))
	for i, c := range components {
		paths[i] = filepath.Join("components", c)
	}
	return kustomizeDir(t, configDir, paths...)
}

// kustomizeDir renders a kustomization directory, with components below it.
func kustomizeDir(t *testing.T, dir string, components ...string) string {
	t.Helper()
	out, err := manifests.RenderYAML(t.Context(), t.TempDir(), dir, components...)
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// generatedName matches the names of the ConfigMaps kustomize's
// configMapGenerator and the chart both suffix with a hash of their data
// (each its own hash): compared without it.
var generatedName = regexp.MustCompile(`\b(isamatch-(?:credential-providers|registry-hosts|rebalancer-policy|webhook-config-d|webhook-config|labeler-config))-[0-9a-z]{10}\b`)

// clusterScoped are the kinds config/ ships that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "SecurityContextConstraints": true,
	"Topology": true, "ResourceFlavor": true, "ClusterQueue": true,
}

// objects splits a multi-document YAML stream into its objects, keyed by
// "apiVersion kind namespace/name", each as canonical JSON. Empty documents
// are skipped; a key seen twice fails the test.
func objects(t *testing.T, stream string) map[string]string {
	t.Helper()
	out := map[string]string{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("split YAML: %v", err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		if len(obj) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		if clusterScoped[fmt.Sprint(obj["kind"])] {
			// kustomize's namespace: sets one on kinds it does not know
			// (ValidatingAdmissionPolicy, custom resources); the API server
			// drops it from cluster-scoped objects.
			delete(meta, "namespace")
		}
		dropConfigChecksum(obj)
		key := fmt.Sprintf("%v %v %v/%v", obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])
		canonical, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		key = generatedName.ReplaceAllString(key, "$1-HASH")
		if _, dup := out[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		// kubectl's kustomize writes a folded scalar (the policies' CEL) back
		// with a blank line before each more-indented line, which adds a
		// line break to the string; CEL ignores line breaks.
		text := strings.ReplaceAll(string(canonical), `\n\n`, `\n`)
		out[key] = generatedName.ReplaceAllString(text, "$1-HASH")
	}
}

// dropConfigChecksum removes the chart's checksum/config annotation from a
// workload's pod template: kustomize rolls the pods by the ConfigMap's
// hashed name alone (TestConfigChecksum checks the annotation).
func dropConfigChecksum(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	meta, _ := tmpl["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		return
	}
	delete(ann, "checksum/config")
	if len(ann) == 0 {
		delete(meta, "annotations")
	}
}

// sameObjects fails the test for every object one rendering has and the
// other lacks or renders differently.
func sameObjects(t *testing.T, helmName, helmOut, kustName, kustOut string) {
	t.Helper()
	h, k := objects(t, helmOut), objects(t, kustOut)
	if len(k) == 0 {
		t.Fatalf("%s rendered nothing", kustName)
	}
	for _, key := range sortedKeys(k) {
		got, ok := h[key]
		switch {
		case !ok:
			t.Errorf("%s renders %s, %s does not", kustName, key, helmName)
		case got != k[key]:
			t.Errorf("%s differs between %s and %s (-%s +%s):\n%s", key, kustName, helmName, kustName, helmName, jsonDiff(k[key], got))
		}
	}
	for _, key := range sortedKeys(h) {
		if _, ok := k[key]; !ok {
			t.Errorf("%s renders %s, %s does not", helmName, key, kustName)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonDiff shows two JSON documents line by line, indented, where they
// differ.
func jsonDiff(a, b string) string {
	indent := func(s string) []string {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
			return []string{s}
		}
		return strings.Split(buf.String(), "\n")
	}
	la, lb := indent(a), indent(b)
	var out strings.Builder
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			fmt.Fprintf(&out, "-%s\n+%s\n", x, y)
		}
	}
	return out.String()
}
