package main

import (
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/isamatch/isamatch/internal/manifests"
)

// shippedArgs returns the webhook container's args with --config naming a
// local copy of the file its ConfigMap holds, so that parseArgs reads
// exactly what the pod would.
func shippedArgs(t *testing.T, objs []runtime.Object, dep *appsv1.Deployment) []string {
	t.Helper()
	pod := dep.Spec.Template.Spec
	args, err := manifests.LocalConfigArgs(objs, dep.Namespace, pod, pod.Containers[0], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// renderKnown renders config/ with components, leaving out the objects
// of kinds client-go does not know.
func renderKnown(t *testing.T, components ...string) []runtime.Object {
	t.Helper()
	paths := make([]string, len(components))
	for i, c := range components {
		paths[i] = filepath.Join("components", c)
	}
	objs, err := manifests.RenderKnown(t.Context(), t.TempDir(), filepath.Join("..", "..", "config"), paths...)
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestShippedConfig: config/, alone, with each component and with every
// one of them, ships a WebhookConfiguration that loads strictly and
// validates (a misspelt field fails here), mounted read-only from its
// hash-named ConfigMap with the components' drop-ins beside it; the
// Deployment's args name the two and nothing else, and no component's
// change undoes another's.
func TestShippedConfig(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "config", "components"))
	if err != nil {
		t.Fatal(err)
	}
	variants := [][]string{nil}
	var all []string
	for _, e := range entries {
		k, err := os.ReadFile(filepath.Join("..", "..", "config", "components", e.Name(), "kustomization.yaml"))
		if err == nil && strings.Contains(string(k), "\nkind: Component\n") {
			variants = append(variants, []string{e.Name()})
			if strings.Contains(string(k), "name: isamatch-webhook-config-d\n") {
				all = append(all, e.Name())
			}
		}
	}
	if len(all) < 5 {
		t.Fatalf("components with a drop-in: %q, want at least cert-manager, credential-providers, evict-misplaced, pull-secrets and registry-hosts", all)
	}
	variants = append(variants, all)
	for _, components := range variants {
		name := "config alone"
		switch {
		case len(components) == 1:
			name = "with " + components[0]
		case len(components) > 1:
			name = "with every component that has a drop-in"
		}
		t.Run(name, func(t *testing.T) {
			objs := renderKnown(t, components...)
			dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
			pod := dep.Spec.Template.Spec
			c := pod.Containers[0]
			_, cm, err := manifests.MountedConfig(objs, dep.Namespace, pod, c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(cm, "isamatch-webhook-config-") {
				t.Errorf("the configuration's ConfigMap is %s, want isamatch-webhook-config-<hash> (configMapGenerator)", cm)
			}
			dropIns, dcm, err := manifests.MountedConfigDir(objs, dep.Namespace, pod, c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(dcm, "isamatch-webhook-config-d-") {
				t.Errorf("the drop-ins' ConfigMap is %s, want isamatch-webhook-config-d-<hash> (configMapGenerator)", dcm)
			}
			for _, dir := range []string{"/etc/isamatch/webhook", "/etc/isamatch/webhook-config.d"} {
				if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dir && m.ReadOnly }) {
					t.Errorf("the webhook mounts no %s read-only: %+v", dir, c.VolumeMounts)
				}
			}
			if len(c.Args) != 2 || !strings.HasPrefix(c.Args[0], manifests.ConfigFlag) || !strings.HasPrefix(c.Args[1], manifests.ConfigDirFlag) {
				t.Errorf("args %q: want only %s and %s, everything else in the files", c.Args, manifests.ConfigFlag, manifests.ConfigDirFlag)
			}
			if len(components) == 1 && slices.Contains(all, components[0]) {
				if _, ok := dropIns["50-"+components[0]+".yaml"]; !ok || len(dropIns) != 1 {
					t.Errorf("drop-ins %v: want 50-%s.yaml alone", slices.Sorted(maps.Keys(dropIns)), components[0])
				}
			}
			t.Setenv(NamespaceEnv, dep.Namespace)
			// In a cluster, where certificate rotation defaults on.
			t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, shippedArgs(t, objs, dep))
			if err != nil {
				t.Fatalf("the shipped configuration does not load: %v", err)
			}
			if len(components) > 1 {
				// Each component's change, with all of them applied.
				if o.certRotation || !o.pullSecrets || !o.evictMisplaced || o.credProviderConfig == "" || o.hostsDir == "" {
					t.Errorf("with %q: certRotation %v, pullSecrets %v, evictMisplaced %v, credProviderConfig %q, hostsDir %q: "+
						"want every component's setting (false, true, true, set, set)", components, o.certRotation, o.pullSecrets, o.evictMisplaced, o.credProviderConfig, o.hostsDir)
				}
			}
		})
	}
}
