package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/yaml"
)

func TestKubeletConfigCgroups(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cgroupV1     bool
		wantFailCgV1 bool
	}{
		{name: "cgroup v1 host allows v1", cgroupV1: true, wantFailCgV1: false},
		{name: "cgroup v2 host keeps the default", cgroupV1: false, wantFailCgV1: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got struct {
				Kind         string `json:"kind"`
				FailCgroupV1 bool   `json:"failCgroupV1"`
				CgroupDriver string `json:"cgroupDriver"`
				FailSwapOn   bool   `json:"failSwapOn"`
				Endpoint     string `json:"containerRuntimeEndpoint"`
			}
			data := kubeletConfig(kubeletParams{cgroupV1: tc.cgroupV1, runtimeSocket: "/r/c.sock", nodeIP: "192.0.2.2", port: 1, healthzPort: 2})
			if err := yaml.Unmarshal(data, &got); err != nil {
				t.Fatalf("kubelet config is not YAML: %v\n%s", err, data)
			}
			want := got
			want.Kind, want.FailCgroupV1, want.CgroupDriver, want.FailSwapOn, want.Endpoint =
				"KubeletConfiguration", tc.wantFailCgV1, "cgroupfs", false, "unix:///r/c.sock"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kubelet config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCNIConfig(t *testing.T) {
	var got struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPAM   struct {
				Type    string `json:"type"`
				DataDir string `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(cniConfig("/run/x/cni"), &got); err != nil {
		t.Fatalf("CNI config is not JSON: %v", err)
	}
	var types []string
	for _, p := range got.Plugins {
		types = append(types, p.Type)
	}
	if diff := cmp.Diff([]string{"bridge", "portmap"}, types); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	if got.Plugins[0].Bridge != BridgeName || got.Plugins[0].IPAM.Type != "host-local" || got.Plugins[0].IPAM.DataDir != "/run/x/cni" {
		t.Errorf("bridge plugin = %+v, want bridge %s with host-local state in /run/x/cni", got.Plugins[0], BridgeName)
	}
}

func TestUnescapeMount(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{name: "plain", in: "/tmp/isamatch-node-1/kubelet", want: "/tmp/isamatch-node-1/kubelet"},
		{name: "space", in: `/tmp/a\040b`, want: "/tmp/a b"},
		{name: "backslash at the end", in: `/tmp/a\`, want: `/tmp/a\`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unescapeMount(tc.in); got != tc.want {
				t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestContainerdConfigRestrictOOM(t *testing.T) {
	for _, tc := range []struct {
		name        string
		restrictOOM bool
		want        string
	}{
		{name: "without CAP_SYS_RESOURCE", restrictOOM: true, want: "restrict_oom_score_adj = true"},
		{name: "with CAP_SYS_RESOURCE", restrictOOM: false, want: "restrict_oom_score_adj = false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := string(containerdConfig("/d", "native", "r/pause:1", "/usr/sbin/runc", tc.restrictOOM))
			var got []string
			for line := range strings.Lines(data) {
				if strings.Contains(line, "restrict_oom_score_adj") {
					got = append(got, strings.TrimSpace(line))
				}
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("restrict_oom_score_adj lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLacksInStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		want    bool
		wantErr bool
	}{
		{name: "all capabilities", status: "Name:\tx\nCapEff:\t000001ffffffffff\n", want: false},
		{name: "CAP_SYS_RESOURCE dropped", status: "CapPrm:\t000001ffffffffff\nCapEff:\t000001fffeffffff\n", want: true},
		{name: "no CapEff", status: "Name:\tx\n", wantErr: true},
		{name: "bad CapEff", status: "CapEff:\tzz\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lacksInStatus(tc.status, unix.CAP_SYS_RESOURCE)
			if (err != nil) != tc.wantErr {
				t.Fatalf("lacksInStatus error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("lacksInStatus = %v, want %v", got, tc.want)
			}
		})
	}
}
