package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// admitOnce sends pod through the handler as the API server would and
// returns the response's JSON patch (nil when it patches nothing) and the
// pod with the patch applied.
func (rig *admissionRig) admitOnce(t *testing.T, pod *corev1.Pod) ([]byte, *corev1.Pod) {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	req := podRequest(t, 0, "")
	req.Object = runtime.RawExtension{Raw: raw}
	resp := rig.handler.Handle(t.Context(), req)
	if !resp.Allowed {
		t.Fatalf("pod denied: %v", resp.Result)
	}
	if err := resp.Complete(req); err != nil {
		t.Fatal(err)
	}
	if len(resp.Patch) == 0 || string(resp.Patch) == "[]" {
		return nil, pod
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("decode patch %s: %v", resp.Patch, err)
	}
	out, err := p.Apply(raw)
	if err != nil {
		t.Fatalf("apply patch %s: %v", resp.Patch, err)
	}
	var mutated corev1.Pod
	if err := json.Unmarshal(out, &mutated); err != nil {
		t.Fatal(err)
	}
	return resp.Patch, &mutated
}

// pushAMD64 pushes a single-platform linux/amd64 image as amd:tag.
func (rig *admissionRig) pushAMD64(t *testing.T, tag string) string {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	ref := rig.host + "/amd:" + tag
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(parsed, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref
}

// byDigest rewrites ref (repo:tag) to repo@digest, as a digest-pinning
// webhook does.
func (rig *admissionRig) byDigest(t *testing.T, ref string) string {
	t.Helper()
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(parsed)
	if err != nil {
		t.Fatalf("head %s: %v", ref, err)
	}
	return parsed.Context().Name() + "@" + desc.Digest.String()
}

// patchedPaths returns the sorted, distinct top paths (first two segments)
// a JSON patch touches.
func patchedPaths(t *testing.T, patch []byte) []string {
	t.Helper()
	var ops []struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatalf("decode patch %s: %v", patch, err)
	}
	var paths []string
	for _, op := range ops {
		parts := strings.SplitN(strings.TrimPrefix(op.Path, "/"), "/", 3)
		p := "/" + strings.Join(parts[:min(2, len(parts))], "/")
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// TestReinvocationIdempotent: with reinvocationPolicy IfNeeded the API
// server calls the webhook again on the pod it already mutated once a later
// webhook has changed it. The second call patches nothing when nothing
// relevant changed (the pod as mutated, an unrelated label, a sidecar of the
// same image); a tag rewritten to the digest it names changes only the
// decision annotation, which names the images (the affinity stays); a
// sidecar that narrows the platforms changes only the affinity and the
// decision. The result is a fixed point: a third call patches nothing.
func TestReinvocationIdempotent(t *testing.T) {
	rig := newAdmissionRig(t)
	multi := rig.push(t, "v1") // riscv64 rva23u64 + amd64 v3
	amd := rig.pushAMD64(t, "v1")

	first := &corev1.Pod{}
	if err := json.Unmarshal(podRequest(t, 0, multi).Object.Raw, first); err != nil {
		t.Fatal(err)
	}
	patch, admitted := rig.admitOnce(t, first)
	if patch == nil || admitted.Spec.Affinity == nil {
		t.Fatalf("first admission wrote no affinity: patch %s", patch)
	}

	tests := []struct {
		name string
		// later is what a webhook after isamatch does to the admitted pod.
		later     func(p *corev1.Pod)
		wantPaths []string // nil: no patch at all
		// affinityChanges: the node affinity written the first time must
		// change (else it must stay).
		affinityChanges bool
	}{
		{name: "nothing changed", later: func(p *corev1.Pod) {}},
		// The pod had no label, so no spread constraint (no default
		// spreading applies to it); with one, siblings can share it and
		// the constraint that replaces the default spreading is added.
		{name: "first label added", later: func(p *corev1.Pod) {
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels["injected"] = "true"
		}, wantPaths: []string{"/spec/topologySpreadConstraints"}},
		// The stored decision holds numbers, not image references: the
		// same platforms give the same decision, so nothing to patch.
		{name: "tag rewritten to its digest", later: func(p *corev1.Pod) {
			p.Spec.Containers[0].Image = rig.byDigest(t, multi)
		}},
		{name: "sidecar of the same image", later: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: multi})
		}},
		{name: "amd64-only sidecar narrows the affinity", later: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: amd})
		}, wantPaths: []string{"/metadata/annotations", "/spec/affinity"}, affinityChanges: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := admitted.DeepCopy()
			tc.later(pod)
			patch, again := rig.admitOnce(t, pod)
			if tc.wantPaths == nil {
				if patch != nil {
					t.Errorf("reinvocation patched %s, want no patch", patch)
				}
				return
			}
			if diff := cmp.Diff(tc.wantPaths, patchedPaths(t, patch)); diff != "" {
				t.Errorf("reinvocation patched paths (-want +got):\n%s\npatch: %s", diff, patch)
			}
			if same := cmp.Equal(admitted.Spec.Affinity, again.Spec.Affinity); same == tc.affinityChanges {
				t.Errorf("affinity changed = %v, want %v: %s", !same, tc.affinityChanges, cmp.Diff(admitted.Spec.Affinity, again.Spec.Affinity))
			}
			// And once more: the result is a fixed point.
			if patch, _ := rig.admitOnce(t, again); patch != nil {
				t.Errorf("third admission patched %s, want no patch", patch)
			}
		})
	}
}
