package charts

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
)

// everything switches on every optional part.
func everything() map[string]any {
	vals := map[string]any{}
	for _, c := range components {
		vals = merge(vals, c.values)
	}
	return vals
}

// merge returns a with b's values set, maps merged key by key.
func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// TestHelmLint is `helm lint --strict` of the chart, with its defaults and
// with every optional part on: no error, no warning.
func TestHelmLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "everything": everything()} {
		t.Run(name, func(t *testing.T) {
			l := action.NewLint()
			l.Strict = true
			l.Namespace = "default"
			l.KubeVersion = &kubeVersion
			res := l.Run([]string{chartDir}, vals)
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				}
			}
			for _, err := range res.Errors {
				t.Errorf("helm lint: %v", err)
			}
		})
	}
}

// TestSchemaRefuses: values.schema.json refuses, with a message naming the
// value, what the templates would render into a broken install.
func TestSchemaRefuses(t *testing.T) {
	tests := []struct {
		name string
		vals map[string]any
		want string
	}{
		{"digest that is no digest", map[string]any{"images": map[string]any{"webhook": map[string]any{"digest": "sha256:abc"}}}, "digest"},
		{"image with neither tag nor digest", map[string]any{"images": map[string]any{"labeler": map[string]any{"tag": "", "digest": ""}}}, "labeler"},
		{"namespace that is no DNS label", map[string]any{"namespaces": map[string]any{"webhook": "Platform_ISA"}}, "webhook"},
		{"kube-system", map[string]any{"namespaces": map[string]any{"labeler": "kube-system"}}, "labeler"},
		{"unknown enforcement", map[string]any{"webhook": map[string]any{"enforcement": "audit"}}, "enforcement"},
		{"unknown key", map[string]any{"webhook": map[string]any{"replica": 3}}, "replica"},
		{"architecture without an image", map[string]any{"labeler": map[string]any{"architectures": []any{"s390x"}}}, "architectures"},
		{"flag without dashes", map[string]any{"webhook": map[string]any{"extraArgs": []any{"v=2"}}}, "extraArgs"},
		{"unknown certificate source", map[string]any{"webhook": map[string]any{"certificates": "vault"}}, "certificates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderRelease(t, tc.vals)
			if err == nil {
				t.Fatalf("values %v rendered; want the schema to refuse them", tc.vals)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// TestPullSecretsAndPolicy: images.pullSecrets and images.pullPolicy reach
// every pod the chart runs, the uninstall Job's included.
func TestPullSecretsAndPolicy(t *testing.T) {
	vals := merge(everything(), map[string]any{"images": map[string]any{"pullPolicy": "Always", "pullSecrets": []any{"regcred"}}})
	manifest, hooks := renderChart(t, vals)
	texts := []string{manifest}
	for _, h := range hooks {
		texts = append(texts, h.Manifest)
	}
	all := strings.Join(texts, "\n---\n")
	for key, obj := range objects(t, all) {
		if !strings.Contains(key, " Deployment ") && !strings.Contains(key, " DaemonSet ") && !strings.Contains(key, " Job ") {
			continue
		}
		if !strings.Contains(obj, `"imagePullSecrets":[{"name":"regcred"}]`) {
			t.Errorf("%s has no imagePullSecrets regcred", key)
		}
		if strings.Contains(obj, `"image":"ghcr.io/isamatch/`) && !strings.Contains(obj, `"imagePullPolicy":"Always"`) {
			t.Errorf("%s runs isamatch's image without imagePullPolicy Always", key)
		}
	}
}
