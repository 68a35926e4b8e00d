package imageisa

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/registry"
)

// heapPeak samples the live heap until stop is closed and returns the
// highest value seen. Sampling can miss a short peak, never invent one.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var ms runtime.MemStats
		peak := uint64(0)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestManyHostileScansBounded reads 24 hostile images (six of each kind in
// hostileImages, each in its own repository so that none is shared) at
// once through one Platforms, with the webhook's default limits, beside a
// legitimate image: the live heap grows by less than 100 MiB over the
// run, and the legitimate image's requirement is still read.
//
//	go test ./pkg/imageisa -run TestManyHostileScansBounded -v
//
// logs the peak growth.
func TestManyHostileScansBounded(t *testing.T) {
	const copies, maxGrowth = 6, 100 << 20
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	push := func(repo string, img v1.Image) string {
		t.Helper()
		ref, err := name.ParseReference(host+"/"+repo, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img, remote.WithContext(t.Context())); err != nil {
			t.Fatal(err)
		}
		return ref.String()
	}
	var refs []string
	for k, h := range hostileImages {
		img := h.img(t)
		for c := range copies {
			refs = append(refs, push(fmt.Sprintf("hostile/k%d-c%d:1", k, c), img))
		}
	}
	good := push("good/app:1", image(t, "riscv64", v1.Config{Entrypoint: []string{"/usr/bin/app"}},
		layer(t, dir("usr"), dir("usr/bin"), fixtureFile("usr/bin/app", "riscv64-rv64imfd", t))))

	res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}, AllowedRegistries: []string{"127.0.0.1"}})
	ps := NewPlatforms(NewInferrer(Options{CacheBytes: 16 << 20}), res)
	auth := registry.PullAuth{Namespace: "team-a"}
	plats := map[string]registry.Platform{}
	for _, ref := range append([]string{good}, refs...) {
		p, err := res.Resolve(t.Context(), ref, auth)
		if err != nil || len(p) != 1 {
			t.Fatalf("resolve %s: %+v, %v", ref, p, err)
		}
		plats[ref] = p[0]
	}

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	peak := heapPeak(stop)
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Go(func() { _, _ = ps.Infer(t.Context(), ref, auth, plats[ref]) })
	}
	r, err := ps.Infer(t.Context(), good, auth, plats[good])
	wg.Wait()
	close(stop)
	growth := int64(<-peak) - int64(base.HeapAlloc)
	t.Logf("%d hostile scans and one legitimate: live heap peak %.1f MiB over the %.1f MiB before", len(refs), float64(growth)/(1<<20), float64(base.HeapAlloc)/(1<<20))
	if growth > maxGrowth {
		t.Errorf("live heap grew by %d MiB, limit %d MiB", growth>>20, maxGrowth>>20)
	}
	if err != nil || r.ISA == nil || r.ISA.Compact() != "rv64imfd" {
		t.Errorf("legitimate image: %s, %v; want rv64imfd", Outcome(r, err), err)
	}
}
