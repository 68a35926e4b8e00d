package charts

import (
	"testing"
)

// component is one optional part: the chart's values that switch it on and
// the kustomize components that add it to config/.
type component struct {
	name       string
	values     map[string]any
	components []string
}

var components = []component{
	{name: "opt-in", values: map[string]any{"webhook": map[string]any{"optIn": true}}, components: []string{"opt-in"}},
	{name: "pull secrets", values: map[string]any{"webhook": map[string]any{"pullSecrets": true}}, components: []string{"pull-secrets"}},
	{name: "credential providers", values: map[string]any{"webhook": map[string]any{"credentialProviders": map[string]any{"enabled": true}}},
		components: []string{"credential-providers"}},
	{name: "registry hosts", values: map[string]any{"webhook": map[string]any{"registryHosts": map[string]any{"enabled": true}}},
		components: []string{"registry-hosts"}},
	{name: "rebalancer", values: map[string]any{"rebalancer": map[string]any{"enabled": true}}, components: []string{"rebalance"}},
	{name: "leaf groups", values: map[string]any{"leafGroups": map[string]any{"enabled": true}}, components: []string{"leaf-groups-kueue"}},
	{name: "monitoring", values: map[string]any{"monitoring": map[string]any{"enabled": true}}, components: []string{"monitoring"}},
	{name: "ingress network policy", values: map[string]any{"networkPolicies": map[string]any{"ingress": map[string]any{"enabled": true}}},
		components: []string{"ingress-networkpolicy"}},
	{name: "egress network policy", values: map[string]any{"networkPolicies": map[string]any{"egress": map[string]any{"enabled": true}}},
		components: []string{"egress-networkpolicy"}},
	{name: "cert-manager", values: map[string]any{"webhook": map[string]any{"certificates": "cert-manager"}}, components: []string{"cert-manager"}},
	{name: "openshift", values: map[string]any{"openshift": map[string]any{"enabled": true}}, components: []string{"openshift"}},
}

// TestDefaultsRenderConfig: the chart with its default values installs
// exactly what `kubectl apply -k config` does, object for object and field
// for field.
func TestDefaultsRenderConfig(t *testing.T) {
	manifest, _ := renderChart(t, nil)
	sameObjects(t, "the chart", manifest, "config/", kustomize(t))
}

// TestComponentsRenderConfig: each optional part switched on in the chart
// installs what config/ with its kustomize component does.
func TestComponentsRenderConfig(t *testing.T) {
	for _, c := range components {
		t.Run(c.name, func(t *testing.T) {
			manifest, _ := renderChart(t, c.values)
			sameObjects(t, "the chart", manifest, "config/ with "+c.components[0], kustomize(t, c.components...))
		})
	}
}
