package registry

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestCacheBoundedInBytes: the cache never holds more than its byte bound
// and evicts the least recently used entries to stay within it.
func TestCacheBoundedInBytes(t *testing.T) {
	tr := newTestRegistry(t)
	label := strings.Repeat("v", MaxLabelBytes) // the largest label kept
	const images = 20
	for i := range images {
		tr.pushImage(t, fmt.Sprintf("app/x:%d", i), image(t, "linux", "riscv64", "", map[string]string{isa.BareImageRequestLabel: label}))
	}
	one := cacheEntry{platforms: []Platform{{OS: "linux", Architecture: "riscv64", ISARequest: label, Digest: "sha256:" + strings.Repeat("0", 64)}}}.size(tr.ref("app/x:10") + "\x00anonymous")
	tests := []struct {
		name     string
		maxBytes int64
		touch    int   // image re-read before the last ones are added, to keep it recent
		kept     []int // images still cached at the end
		evicted  []int
	}{
		{name: "room for all", maxBytes: 1 << 20, kept: []int{0, 1, 10, 19}},
		{name: "room for five: the oldest go", maxBytes: 5 * one, touch: -1, kept: []int{15, 19}, evicted: []int{0, 14}},
		{name: "a recently used entry stays", maxBytes: 5 * one, touch: 12, kept: []int{12, 19}, evicted: []int{13, 14}},
		{name: "no room at all", maxBytes: one - 1, touch: -1, evicted: []int{0, 19}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, MaxCacheBytes: tc.maxBytes})
			for i := range images {
				if i == 16 && tc.touch >= 0 {
					_, _ = r.Resolve(t.Context(), tr.ref(fmt.Sprintf("app/x:%d", tc.touch)), teamA)
				}
				if _, err := r.Resolve(t.Context(), tr.ref(fmt.Sprintf("app/x:%d", i)), teamA); err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if _, bytes := r.cache.stats(); bytes > tc.maxBytes {
					t.Fatalf("after %d images the cache holds %d bytes, over its bound of %d", i+1, bytes, tc.maxBytes)
				}
			}
			for _, i := range tc.kept {
				if _, ok, _ := r.Cached(tr.ref(fmt.Sprintf("app/x:%d", i)), teamA); !ok {
					t.Errorf("image %d was evicted, want it cached", i)
				}
			}
			for _, i := range tc.evicted {
				if _, ok, _ := r.Cached(tr.ref(fmt.Sprintf("app/x:%d", i)), teamA); ok {
					t.Errorf("image %d is cached, want it evicted", i)
				}
			}
		})
	}
}

// TestCacheReplaceKeepsCount: replacing an entry (after expiry) does not
// count its bytes twice.
func TestCacheReplaceKeepsCount(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, now: clock.Now})
	tr.reset() // the push's own HEAD
	_, _ = r.Resolve(t.Context(), tr.ref("app/x:1"), teamA)
	n0, b0 := r.cache.stats()
	for range 5 {
		clock.Advance(DefaultTTL + time.Second)
		_, _ = r.Resolve(t.Context(), tr.ref("app/x:1"), teamA)
	}
	if n, b := r.cache.stats(); n != n0 || b != b0 {
		t.Errorf("after 5 refreshes the cache holds %d entries, %d bytes; want %d, %d", n, b, n0, b0)
	}
	// Each refresh HEADs; the digest's platforms stay cached.
	if got := tr.count(http.MethodHead, "/manifests/"); got != 6 {
		t.Errorf("manifest HEADs = %d, want 6", got)
	}
	if got := tr.count(http.MethodGet, "/manifests/"); got != 1 {
		t.Errorf("manifest GETs = %d, want 1", got)
	}
}
