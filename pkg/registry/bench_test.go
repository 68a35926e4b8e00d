package registry

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// BenchmarkConcurrentResolveSameImage measures 1,000 concurrent Resolve
// calls for one uncached image (a fresh image per iteration) and reports
// how many manifest requests reached the registry per distinct image: the
// collapsing goal is exactly 1 (plus one per platform for an index).
func BenchmarkConcurrentResolveSameImage(b *testing.B) {
	tr := newTestRegistry(b)
	img := image(b, "linux", "riscv64", "rva23u64", map[string]string{"isa.request": "rv64gcv"})
	const callers = 1000
	r := newResolver(b, Options{InsecureRegistries: []string{tr.host}})
	refs := make([]string, b.N)
	for i := range b.N {
		tag := fmt.Sprintf("app/bench:%d", i)
		tr.pushImage(b, tag, img)
		refs[i] = tr.ref(tag)
	}
	tr.reset()
	b.ResetTimer()
	for i := range b.N {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for range callers {
			wg.Go(func() {
				<-gate
				if _, err := r.Resolve(b.Context(), refs[i], teamA); err != nil {
					b.Error(err)
				}
			})
		}
		close(gate)
		wg.Wait()
	}
	b.StopTimer()
	perImage := float64(tr.count(http.MethodGet, "/manifests/")) / float64(b.N)
	b.ReportMetric(perImage, "manifestGETs/image")
	b.ReportMetric(float64(tr.count(http.MethodGet, "")-tr.count(http.MethodGet, "/manifests/")-tr.count(http.MethodGet, "/blobs/"))/float64(b.N), "pings/image")
	b.ReportMetric(callers, "callers/image")
	if perImage != 1 {
		b.Errorf("manifest GETs per image = %v, want 1", perImage)
	}
}

// BenchmarkResolveCached measures a cache hit.
func BenchmarkResolveCached(b *testing.B) {
	tr := newTestRegistry(b)
	tr.pushImage(b, "app/x:1", image(b, "linux", "amd64", "v3", nil))
	r := newResolver(b, Options{InsecureRegistries: []string{tr.host}})
	ref := tr.ref("app/x:1")
	if _, err := r.Resolve(b.Context(), ref, teamA); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Resolve(b.Context(), ref, teamA); err != nil {
				b.Error(err)
			}
		}
	})
}
