package main

import (
	"flag"
	"io"
	"os"
	"path"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/registry/credprov"
)

// TestCredentialProvidersComponent renders config with the
// credential-providers component (after pull-secrets, whose flag must
// survive) and checks the wiring: the flags point into a read-only
// ConfigMap volume and a read-only emptyDir that an init container fills,
// no hostPath, restricted security contexts, and a shipped config that the
// webhook accepts.
func TestCredentialProvidersComponent(t *testing.T) {
	objs := renderWithComponents(t, "pull-secrets", "credential-providers")
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	spec := dep.Spec.Template.Spec
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, shippedArgs(t, objs, dep))
	if err != nil {
		t.Fatalf("Deployment args do not parse: %v", err)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		if v.HostPath != nil {
			t.Errorf("volume %s is a hostPath: the namespace enforces Pod Security restricted", v.Name)
		}
	}
	mountOf := func(c corev1.Container, dir string) (corev1.VolumeMount, bool) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir {
				return m, true
			}
		}
		return corev1.VolumeMount{}, false
	}
	cfgMount, ok := mountOf(spec.Containers[0], path.Dir(o.credProviderConfig))
	cfgVolume := volumes[cfgMount.Name]
	if !ok || !cfgMount.ReadOnly || cfgVolume.ConfigMap == nil {
		t.Fatalf("--image-credential-provider-config %q: not in a read-only ConfigMap mount (%+v, %+v)", o.credProviderConfig, cfgMount, cfgVolume)
	}
	binMount, ok := mountOf(spec.Containers[0], o.credProviderBinDir)
	if !ok || !binMount.ReadOnly || volumes[binMount.Name].EmptyDir == nil {
		t.Errorf("--image-credential-provider-bin-dir %q: not a read-only emptyDir mount (%+v)", o.credProviderBinDir, binMount)
	}
	if len(spec.InitContainers) != 1 {
		t.Fatalf("init containers: %d, want the one that copies the plugins", len(spec.InitContainers))
	}
	copier := spec.InitContainers[0]
	if m, ok := mountOf(copier, o.credProviderBinDir); !ok || m.ReadOnly || m.Name != binMount.Name {
		t.Errorf("init container %s does not mount the plugin dir writable (%+v)", copier.Name, m)
	}
	if n := len(copier.Command); n == 0 || path.Clean(copier.Command[n-1]) != o.credProviderBinDir {
		t.Errorf("init container %s command %q does not copy into %s", copier.Name, copier.Command, o.credProviderBinDir)
	}
	sc := copier.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("init container %s security context %+v: want no privilege escalation, all capabilities dropped, read-only root", copier.Name, sc)
	}
	if !o.pullSecrets {
		t.Error("--pull-secrets of the pull-secrets component lost")
	}

	// The shipped config, as the webhook reads it, with a fake executable
	// for each provider it names.
	cm := find(t, objs, cfgVolume.ConfigMap.Name, func(c *corev1.ConfigMap) string { return c.Name })
	data, ok := cm.Data[path.Base(o.credProviderConfig)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Name, path.Base(o.credProviderConfig))
	}
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var names struct{ Providers []struct{ Name string } }
	if err := yaml.Unmarshal([]byte(data), &names); err != nil {
		t.Fatal(err)
	}
	for _, p := range names.Providers {
		if err := os.WriteFile(filepath.Join(dir, p.Name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := credprov.New(credprov.Options{ConfigPath: cfgFile, BinDir: dir}); err != nil {
		t.Errorf("shipped credential provider config: %v", err)
	}
}
