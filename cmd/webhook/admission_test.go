package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	pmutate "github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// admissionRig is the webhook's handler wired as run wires it (real
// Resolver, real PodMutator, static inventory) against an in-process
// registry that counts manifest requests.
type admissionRig struct {
	host      string
	manifests atomic.Int64
	handler   admissionHandler
}

func newAdmissionRig(tb testing.TB) *admissionRig {
	tb.Helper()
	rig := &admissionRig{}
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
			rig.manifests.Add(1)
		}
		inner.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	rig.host = strings.TrimPrefix(srv.URL, "http://")

	nodes := map[string]map[string]string{}
	for i, s := range []string{"rva23u64", "rv64gc", "x86-64-v3", "arm64"} {
		n, err := isa.Parse(s)
		if err != nil {
			tb.Fatalf("parse node ISA %s: %v", s, err)
		}
		nodes[fmt.Sprintf("node-%d", i)] = isa.NodeLabels(n, nil)
	}
	res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{rig.host}})
	rig.handler = admissionHandler{pmutate.NewPodMutator(res, inventory.NewStatic(nodes), pmutate.Options{})}
	return rig
}

// push pushes a two-platform index as app:tag and returns its reference.
func (rig *admissionRig) push(tb testing.TB, tag string) string {
	tb.Helper()
	var adds []mutate.IndexAddendum
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}, {OS: "linux", Architecture: "amd64", Variant: "v3"}} {
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant})
		if err != nil {
			tb.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ref := rig.host + "/app:" + tag
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		tb.Fatal(err)
	}
	if err := remote.WriteIndex(parsed, mutate.AppendManifests(empty.Index, adds...)); err != nil {
		tb.Fatalf("push %s: %v", ref, err)
	}
	return ref
}

func podRequest(tb testing.TB, i int, image string) admission.Request {
	tb.Helper()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "team"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		tb.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "uid",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "team",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}}
}

// admitConcurrently admits n pods with image at once and returns how many
// responses carried a patch.
func (rig *admissionRig) admitConcurrently(tb testing.TB, n int, image string) int {
	tb.Helper()
	reqs := make([]admission.Request, n)
	for i := range reqs {
		reqs[i] = podRequest(tb, i, image)
	}
	var patched atomic.Int64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for _, req := range reqs {
		wg.Go(func() {
			<-gate
			resp := rig.handler.Handle(tb.Context(), req)
			if resp.Allowed && (len(resp.Patch) > 0 || len(resp.Patches) > 0) && len(resp.Warnings) == 0 {
				patched.Add(1)
			}
		})
	}
	close(gate)
	wg.Wait()
	return int(patched.Load())
}

// TestConcurrentAdmissionsOneManifestFetch: 1,000 concurrent admissions of
// pods with the same uncached image cause one fetch of the image's index
// (plus one per platform manifest), and every pod is mutated.
func TestConcurrentAdmissionsOneManifestFetch(t *testing.T) {
	tests := []struct {
		name string
		pods int
	}{
		{name: "one pod", pods: 1},
		{name: "1000 pods at once", pods: 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rig := newAdmissionRig(t)
			image := rig.push(t, "v1")
			rig.manifests.Store(0)
			if got := rig.admitConcurrently(t, tc.pods, image); got != tc.pods {
				t.Errorf("%d of %d pods mutated without warnings, want all", got, tc.pods)
			}
			// The index and its two platform manifests, once.
			if got := rig.manifests.Load(); got != 3 {
				t.Errorf("manifest GETs = %d, want 3 (index + 2 platforms, once)", got)
			}
		})
	}
}

// BenchmarkConcurrentAdmissionsSameUncachedImage reports registry manifest
// requests per distinct image when 1,000 pods with that (uncached) image are
// admitted at once through the real handler and resolver.
func BenchmarkConcurrentAdmissionsSameUncachedImage(b *testing.B) {
	rig := newAdmissionRig(b)
	const pods = 1000
	images := make([]string, b.N)
	for i := range b.N {
		images[i] = rig.push(b, fmt.Sprintf("v%d", i))
	}
	rig.manifests.Store(0)
	b.ResetTimer()
	for i := range b.N {
		if got := rig.admitConcurrently(b, pods, images[i]); got != pods {
			b.Fatalf("%d of %d pods mutated", got, pods)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rig.manifests.Load())/float64(b.N), "manifestGETs/image")
	b.ReportMetric(pods, "admissions/image")
}
