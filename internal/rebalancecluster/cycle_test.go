package rebalancecluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/testbed"
)

func TestShippedPolicy(t *testing.T) {
	root, err := testbed.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		overrides map[string]any
		want      map[string]any // ISAFit args checked
	}{
		{"as shipped", nil, map[string]any{"maxEvictionsPerCycle": float64(10), "minPodAge": "5m"}},
		{"limits raised", map[string]any{"maxEvictionsPerCycle": 8, "minPodAge": "1s"},
			map[string]any{"maxEvictionsPerCycle": float64(8), "minPodAge": "1s", "maxEvictionsPerNode": float64(2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ShippedPolicy(root, tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			args := isaFitArgs(t, data)
			got := map[string]any{}
			for k := range tc.want {
				got[k] = args[k]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ISAFit args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShippedPolicyWithoutISAFit(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, PolicyFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n"
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ShippedPolicy(root, nil); err == nil {
		t.Error("ShippedPolicy of a policy without ISAFit: no error")
	}
}

// isaFitArgs returns the ISAFit plugin's args in policy.
func isaFitArgs(t *testing.T, policy []byte) map[string]any {
	t.Helper()
	var p struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(policy, &p); err != nil {
		t.Fatal(err)
	}
	for _, prof := range p.Profiles {
		for _, pc := range prof.PluginConfig {
			if pc.Name == "ISAFit" {
				return pc.Args
			}
		}
	}
	t.Fatal("no ISAFit in the policy")
	return nil
}
