package charts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// scc is the part of security.openshift.io/v1 SecurityContextConstraints the
// test reads.
type scc struct {
	AllowHostDirVolumePlugin bool     `json:"allowHostDirVolumePlugin"`
	AllowPrivilegedContainer bool     `json:"allowPrivilegedContainer"`
	AllowPrivilegeEscalation *bool    `json:"allowPrivilegeEscalation"`
	AllowedCapabilities      []string `json:"allowedCapabilities"`
	RequiredDropCapabilities []string `json:"requiredDropCapabilities"`
	ReadOnlyRootFilesystem   bool     `json:"readOnlyRootFilesystem"`
	RunAsUser                struct {
		Type string `json:"type"`
	} `json:"runAsUser"`
	SeccompProfiles []string `json:"seccompProfiles"`
	Volumes         []string `json:"volumes"`
	Users           []string `json:"users"`
}

// TestOpenShiftSCCFitsTheLabeler: the SCC of config/components/openshift
// admits the labeler DaemonSet's pod as config/ ships it (every volume
// type, capability and user it asks for) and grants nothing it does not
// ask for (no privileged container, no escalation, a read-only root).
func TestOpenShiftSCCFitsTheLabeler(t *testing.T) {
	objs := objects(t, kustomize(t, "openshift"))
	var s scc
	var ds appsv1.DaemonSet
	for key, text := range objs {
		switch {
		case strings.HasPrefix(key, "security.openshift.io/v1 SecurityContextConstraints "):
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(key, "apps/v1 DaemonSet "):
			if err := json.Unmarshal([]byte(text), &ds); err != nil {
				t.Fatal(err)
			}
		}
	}
	pod := ds.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("labeler DaemonSet has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	for _, v := range pod.Volumes {
		typ := ""
		switch {
		case v.HostPath != nil:
			typ = "hostPath"
		case v.EmptyDir != nil:
			typ = "emptyDir"
		case v.ConfigMap != nil:
			typ = "configMap"
		default:
			t.Errorf("volume %s is of a type the test does not know", v.Name)
			continue
		}
		if !slices.Contains(s.Volumes, typ) {
			t.Errorf("the SCC refuses volume %s: type %s not in %v", v.Name, typ, s.Volumes)
		}
		if typ == "hostPath" && !s.AllowHostDirVolumePlugin {
			t.Errorf("the SCC refuses the hostPath volume %s", v.Name)
		}
	}
	for _, add := range sc.Capabilities.Add {
		if !slices.Contains(s.AllowedCapabilities, string(add)) {
			t.Errorf("the SCC refuses capability %s", add)
		}
	}
	for _, allowed := range s.AllowedCapabilities {
		if !slices.Contains(sc.Capabilities.Add, corev1.Capability(allowed)) {
			t.Errorf("the SCC allows capability %s, which the labeler does not ask for", allowed)
		}
	}
	if !slices.Equal(s.RequiredDropCapabilities, []string{"ALL"}) || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("requiredDropCapabilities %v, labeler drops %v: want ALL in both", s.RequiredDropCapabilities, sc.Capabilities.Drop)
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 && s.RunAsUser.Type != "RunAsAny" {
		t.Errorf("the labeler runs as UID 0; the SCC's runAsUser is %s", s.RunAsUser.Type)
	}
	if s.AllowPrivilegedContainer || s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation || !s.ReadOnlyRootFilesystem {
		t.Errorf("the SCC grants more than the labeler needs: privileged %v, escalation %v, read-only root %v",
			s.AllowPrivilegedContainer, s.AllowPrivilegeEscalation, s.ReadOnlyRootFilesystem)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || !slices.Equal(s.SeccompProfiles, []string{"runtime/default"}) {
		t.Errorf("seccomp: SCC %v, labeler %+v: want runtime/default", s.SeccompProfiles, sc.SeccompProfile)
	}
	if len(s.Users) != 0 {
		t.Errorf("the SCC lists users %v: grant it by RBAC, which follows a renamed namespace", s.Users)
	}
}

// TestUninstallHook: with uninstall.prune (the default) the chart runs the
// prune Job of config/components/uninstall after helm uninstall, in the
// release's namespace, with the labeler image of the release; without it,
// nothing.
func TestUninstallHook(t *testing.T) {
	_, hooks := renderChart(t, map[string]any{"images": map[string]any{"labeler": map[string]any{
		"digest": "sha256:" + strings.Repeat("ab", 32)}}})
	kinds := map[string]bool{}
	for _, h := range hooks {
		kinds[h.Kind] = true
		if len(h.Events) != 1 || h.Events[0] != "post-delete" {
			t.Errorf("hook %s %s runs on %v, want post-delete", h.Kind, h.Name, h.Events)
		}
		if h.Kind == "Job" {
			if !strings.Contains(h.Manifest, "namespace: default") {
				t.Errorf("the Job is not in the release's namespace:\n%s", h.Manifest)
			}
			if !strings.Contains(h.Manifest, "image: ghcr.io/isamatch/labeler@sha256:abab") || !strings.Contains(h.Manifest, "--prune") {
				t.Errorf("the Job does not run the release's labeler with --prune:\n%s", h.Manifest)
			}
		}
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"} {
		if !kinds[k] {
			t.Errorf("no %s among the hooks", k)
		}
	}
	if _, hooks := renderChart(t, map[string]any{"uninstall": map[string]any{"prune": false}}); len(hooks) != 0 {
		t.Errorf("uninstall.prune false renders %d hooks, want none", len(hooks))
	}
}
