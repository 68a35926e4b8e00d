package main

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/isamatch/isamatch/pkg/registry"
)

// TestRegistryHostsComponent renders config with the registry-hosts
// component and reads the mounted directory as the kubelet lays it out
// and the webhook reads it.
func TestRegistryHostsComponent(t *testing.T) {
	objs := renderWithComponents(t, "registry-hosts")
	h := readMountedHostsDir(t, objs)
	if diff := cmp.Diff([]string{"index.docker.io"}, h.Registries()); diff != "" {
		t.Errorf("registries configured (-want +got):\n%s", diff)
	}
}

// TestRegistryHostsOverlay renders the overlays the component's comment
// shows: the user's files replace the ConfigMap, their items the volume's
// (a layer above the one with the component: kustomize runs a
// kustomization's own generators before its components).
func TestRegistryHostsOverlay(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel := func(p string) string {
		r, err := filepath.Rel(filepath.Join(dir, "base"), filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	files := map[string]string{
		"certs.d/docker.io/hosts.toml": "server = \"https://registry-1.docker.io\"\n[host.\"https://docker-mirror.internal:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"certs.d/_default/hosts.toml":  "[host.\"http://10.0.0.5:5000\"]\n",
		"base/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ` + rel("config") + `
components:
  - ` + rel(filepath.Join("config", "components", "registry-hosts")) + "\n",
		"kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - base
configMapGenerator:
  - name: isamatch-registry-hosts
    namespace: isamatch-system
    behavior: replace
    files:
      - docker.io=certs.d/docker.io/hosts.toml
      - _default=certs.d/_default/hosts.toml
patches:
  - patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: isamatch-webhook, namespace: isamatch-system}
      spec:
        template:
          spec:
            volumes:
              - name: registry-hosts
                configMap:
                  name: isamatch-registry-hosts
                  items:
                    - {key: docker.io, path: docker.io/hosts.toml}
                    - {key: _default, path: _default/hosts.toml}
`,
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var objs []runtime.Object
	for _, u := range kustomize(t, dir) {
		var obj runtime.Object
		switch u.GetKind() {
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	h := readMountedHostsDir(t, objs)
	if diff := cmp.Diff([]string{"index.docker.io"}, h.Registries()); diff != "" {
		t.Errorf("registries configured (-want +got):\n%s", diff)
	}
}

// readMountedHostsDir checks that --registry-hosts-dir is a read-only
// ConfigMap mount whose items are all in the ConfigMap, writes those items
// where the kubelet would, and reads the directory as the webhook does.
func readMountedHostsDir(t *testing.T, objs []runtime.Object) *registry.Hosts {
	t.Helper()
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	spec := dep.Spec.Template.Spec
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, shippedArgs(t, objs, dep))
	if err != nil {
		t.Fatalf("Deployment args do not parse: %v", err)
	}
	if o.hostsDir == "" {
		t.Fatal("no --registry-hosts-dir in the Deployment's args")
	}
	i := slices.IndexFunc(spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == o.hostsDir })
	if i < 0 || !spec.Containers[0].VolumeMounts[i].ReadOnly {
		t.Fatalf("--registry-hosts-dir %s is not a read-only mount: %+v", o.hostsDir, spec.Containers[0].VolumeMounts)
	}
	mount := spec.Containers[0].VolumeMounts[i]
	v := spec.Volumes[slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })]
	if v.ConfigMap == nil || len(v.ConfigMap.Items) == 0 {
		t.Fatalf("volume %s: want a ConfigMap with items mapping keys to <registry>/hosts.toml, got %+v", v.Name, v.VolumeSource)
	}
	cm := find(t, objs, v.ConfigMap.Name, func(c *corev1.ConfigMap) string { return c.Name })
	dir := t.TempDir()
	for _, it := range v.ConfigMap.Items {
		data, ok := cm.Data[it.Key]
		if !ok {
			t.Fatalf("item key %s is not in ConfigMap %s (keys %v)", it.Key, cm.Name, slices.Sorted(maps.Keys(cm.Data)))
		}
		if filepath.Base(it.Path) != "hosts.toml" {
			t.Errorf("item %s: path %s, want <registry>/hosts.toml", it.Key, it.Path)
		}
		p := filepath.Join(dir, it.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := registry.ReadHostsDir(dir)
	if err != nil {
		t.Fatalf("shipped hosts dir: %v", err)
	}
	if len(h.Warnings) > 0 {
		t.Errorf("shipped hosts dir warnings: %q", h.Warnings)
	}
	if _, err := registry.NewResolver(o.registryOptions(nil, nil)); err != nil {
		t.Errorf("registry options: %v", err)
	}
	return h
}
