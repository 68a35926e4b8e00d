package main

import (
	"errors"
	"flag"
	"io"
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

// TestShippedConfig: config/, alone and with each component, ships a
// WebhookConfiguration that loads strictly and validates (a misspelt
// field fails here), mounted read-only from its hash-named ConfigMap, and
// the Deployment's args name that file first.
func TestShippedConfig(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "config", "components"))
	if err != nil {
		t.Fatal(err)
	}
	variants := [][]string{nil}
	for _, e := range entries {
		k, err := os.ReadFile(filepath.Join("..", "..", "config", "components", e.Name(), "kustomization.yaml"))
		if err == nil && strings.Contains(string(k), "\nkind: Component\n") {
			variants = append(variants, []string{e.Name()})
		}
	}
	for _, components := range variants {
		name := "config alone"
		if components != nil {
			name = "with " + components[0]
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
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/isamatch/webhook" && m.ReadOnly }) {
				t.Errorf("the webhook mounts no /etc/isamatch/webhook read-only: %+v", c.VolumeMounts)
			}
			if len(c.Args) == 0 || !strings.HasPrefix(c.Args[0], manifests.ConfigFlag) {
				t.Errorf("args %q: want %s first", c.Args, manifests.ConfigFlag)
			}
			if components == nil && len(c.Args) != 1 {
				t.Errorf("config/ ships args %q: want only %s, everything else in the file", c.Args, manifests.ConfigFlag)
			}
			t.Setenv(NamespaceEnv, dep.Namespace)
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			if _, err := parseArgs(fs, shippedArgs(t, objs, dep)); err != nil {
				t.Errorf("the shipped configuration does not load: %v", err)
			}
		})
	}
}
