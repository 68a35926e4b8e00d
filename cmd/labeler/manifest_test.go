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

	"github.com/isamatch/isamatch/internal/manifests"
)

// TestShippedConfig: config/daemonset ships a LabelerConfiguration that
// loads strictly and validates (a misspelt field fails here), mounted
// read-only from its hash-named ConfigMap, and the DaemonSet's only arg
// names it.
func TestShippedConfig(t *testing.T) {
	objs, err := manifests.RenderKnown(t.Context(), t.TempDir(), filepath.Join("..", "..", "config", "daemonset"))
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	dss := manifests.Named(objs, "isamatch-labeler", func(d *appsv1.DaemonSet) string { return d.Name })
	if len(dss) != 1 {
		t.Fatalf("config/daemonset renders %d DaemonSets isamatch-labeler, want 1", len(dss))
	}
	ds := dss[0]
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	_, cm, err := manifests.MountedConfig(objs, ds.Namespace, pod, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cm, "isamatch-labeler-config-") {
		t.Errorf("the configuration's ConfigMap is %s, want isamatch-labeler-config-<hash> (configMapGenerator)", cm)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/isamatch/labeler" && m.ReadOnly }) {
		t.Errorf("the labeler mounts no /etc/isamatch/labeler read-only: %+v", c.VolumeMounts)
	}
	if len(c.Args) != 1 || !strings.HasPrefix(c.Args[0], manifests.ConfigFlag) {
		t.Errorf("args %q: want only %s, everything else in the file", c.Args, manifests.ConfigFlag)
	}
	// Ready within a second of serving, so a rollout moves on to the
	// next nodes without waiting out a readiness period.
	if p := c.StartupProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.PeriodSeconds != 1 {
		t.Errorf("startup probe %+v: want /readyz every second", p)
	}
	args, err := manifests.LocalConfigArgs(objs, ds.Namespace, pod, c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("NODE_NAME", "n1")
	fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, args)
	if err != nil {
		t.Fatalf("the shipped configuration does not load: %v", err)
	}
	if o.hostRoot != "/host" || o.execUID != 65534 || o.execGID != 65534 {
		t.Errorf("host root %q, exec uid %d gid %d: want /host and nobody (65534), where the DaemonSet mounts the host and as whom it runs commands", o.hostRoot, o.execUID, o.execGID)
	}
}
