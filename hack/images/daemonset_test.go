package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The labeler DaemonSet runs only on Linux nodes of the architectures its
// image is built for: a pod on any other node could never start.
func TestLabelerDaemonSetMatchesTheImagePlatforms(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "daemonset", "daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(data, &ds); err != nil {
		t.Fatalf("config/daemonset/daemonset.yaml: %v", err)
	}
	spec := ds.Spec.Template.Spec
	if got := spec.NodeSelector[corev1.LabelOSStable]; got != "linux" {
		t.Errorf("nodeSelector %s = %q, want linux", corev1.LabelOSStable, got)
	}
	var want []string
	for _, p := range supportedPlatforms {
		if p.OS == "linux" {
			want = append(want, p.Arch)
		}
	}
	var got []string
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if e.Key == corev1.LabelArchStable && e.Operator == corev1.NodeSelectorOpIn {
					got = append(got, e.Values...)
				}
			}
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the DaemonSet's required %s values differ from the image's platforms (-images +daemonset):\n%s", corev1.LabelArchStable, diff)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == "/proc/sys/fs/binfmt_misc" {
			t.Errorf("volume %s mounts /proc/sys/fs/binfmt_misc itself: kernels without binfmt_misc lack it and the pod would not start", v.Name)
		}
	}
}
