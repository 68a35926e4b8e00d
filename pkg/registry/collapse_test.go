package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestSharedResolutionSurvivesFirstCallerCancel(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "arm64", "", nil))
	gate := make(chan struct{})
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/manifests/") {
			<-gate
		}
		return false
	})
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
	ref := tr.ref("app/x:1")

	first, cancelFirst := context.WithCancel(t.Context())
	firstErr := make(chan error, 1)
	go func() {
		_, err := r.Resolve(first, ref, teamA)
		firstErr <- err
	}()
	// Wait until the shared resolution is at the registry (its HEAD).
	for tr.count(http.MethodHead, "/manifests/") == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	var got []Platform
	go func() {
		var err error
		got, err = r.Resolve(t.Context(), ref, teamA)
		second <- err
	}()
	cancelFirst()
	if err := <-firstErr; err == nil || !strings.Contains(err.Error(), KindTimeout) {
		t.Errorf("cancelled caller got %v, want a timeout error", err)
	}
	close(gate)
	if err := <-second; err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "arm64"}}, got, ignoreDigest); diff != "" {
		t.Errorf("second caller (-want +got):\n%s", diff)
	}
	if n := tr.count(http.MethodGet, "/manifests/"); n != 1 {
		t.Errorf("manifest GETs = %d, want 1", n)
	}
}

// TestConcurrentResolveCollapses is the key property: 1,000 concurrent
// lookups of the same uncached image cost one registry resolution.
func TestConcurrentResolveCollapses(t *testing.T) {
	tr := newTestRegistry(t)
	tests := []struct {
		name      string
		push      func(t *testing.T) string
		manifests int // manifest GETs of one resolution
		blobs     int // config blob GETs of one resolution
	}{
		{name: "single manifest", manifests: 1, blobs: 1, push: func(t *testing.T) string {
			tr.pushImage(t, "app/single:1", image(t, "linux", "riscv64", "", nil))
			return tr.ref("app/single:1")
		}},
		{name: "index of three platforms", manifests: 4, blobs: 3, push: func(t *testing.T) string {
			tr.pushIndex(t, "app/multi:1", index(t,
				entry{img: image(t, "linux", "riscv64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
				entry{img: image(t, "linux", "amd64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
				entry{img: image(t, "linux", "arm64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
			))
			return tr.ref("app/multi:1")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := tc.push(t)
			m := NewMetrics()
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m})
			gate := make(chan struct{})
			tr.reset()
			var wg sync.WaitGroup
			errs := make(chan error, 1000)
			for range 1000 {
				wg.Go(func() {
					<-gate
					ps, err := r.Resolve(t.Context(), ref, teamA)
					if err == nil && len(ps) == 0 {
						err = errors.New("no platforms")
					}
					if err != nil {
						errs <- err
					}
				})
			}
			close(gate)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("Resolve: %v", err)
			}
			if got := tr.count(http.MethodGet, "/manifests/"); got != tc.manifests {
				t.Errorf("manifest GETs = %d, want %d (requests: %v)", got, tc.manifests, tr.snapshot())
			}
			if got := tr.count(http.MethodGet, "/blobs/"); got != tc.blobs {
				t.Errorf("blob GETs = %d, want %d", got, tc.blobs)
			}
			hits, misses, coalesced := value(t, m.CacheHits), value(t, m.CacheMisses), value(t, m.Coalesced)
			if misses != 1 || hits+coalesced != 999 {
				t.Errorf("metrics: misses %v hits %v coalesced %v, want 1 miss and 999 hits+coalesced", misses, hits, coalesced)
			}
			if got := value(t, m.Requests.WithLabelValues("manifest")); got != float64(tc.manifests) {
				t.Errorf("requests{type=manifest} = %v, want %d", got, tc.manifests)
			}
		})
	}
}

func TestMaxConcurrentBoundsRequests(t *testing.T) {
	tr := newTestRegistry(t)
	var entries []entry
	for i := range 12 {
		arch := fmt.Sprintf("arch%d", i)
		entries = append(entries, entry{img: image(t, "linux", arch, "", nil), platform: &v1.Platform{OS: "linux", Architecture: arch}})
	}
	tr.pushIndex(t, "app/wide:1", index(t, entries...))
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		time.Sleep(20 * time.Millisecond) // let requests overlap
		return false
	})
	tests := []struct {
		name string
		max  int
	}{
		{name: "one at a time", max: 1},
		{name: "three at a time", max: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, maxConcurrent: tc.max})
			tr.reset()
			got, err := r.Resolve(t.Context(), tr.ref("app/wide:1"), teamA)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if len(got) != 12 {
				t.Errorf("Resolve returned %d platforms, want 12", len(got))
			}
			if seen := tr.maxSeen.Load(); seen > int64(tc.max) {
				t.Errorf("registry saw %d requests at once, want at most %d", seen, tc.max)
			}
		})
	}
}

func TestErrorsAreCountedByKind(t *testing.T) {
	tr := newTestRegistry(t)
	m := NewMetrics()
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m})
	for range 3 {
		_, _ = r.Resolve(t.Context(), tr.ref("app/none:1"), teamA)
	}
	if got := value(t, m.Errors.WithLabelValues(KindNotFound)); got != 3 {
		t.Errorf("errors{kind=notFound} = %v, want 3", got)
	}
	if got := value(t, m.CacheHits); got != 2 {
		t.Errorf("cache hits = %v, want 2 (the error is cached)", got)
	}
}
