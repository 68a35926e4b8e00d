package registry

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// testRegistry is an in-process OCI registry (go-containerregistry's
// pkg/registry) that counts the requests it serves and lets a test put a
// handler in front of it.
type testRegistry struct {
	srv  *httptest.Server
	host string

	mu       sync.Mutex
	requests map[string]int // "GET /v2/repo/manifests/tag" -> count
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	front    atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	return newCountingServer(t, ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
}

// newCountingServer serves inner on loopback over plain HTTP, counting
// requests as testRegistry does.
func newCountingServer(t testing.TB, inner http.Handler) *testRegistry {
	t.Helper()
	tr := &testRegistry{requests: map[string]int{}}
	tr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := tr.inFlight.Add(1)
		defer tr.inFlight.Add(-1)
		for {
			old := tr.maxSeen.Load()
			if n <= old || tr.maxSeen.CompareAndSwap(old, n) {
				break
			}
		}
		tr.mu.Lock()
		tr.requests[r.Method+" "+r.URL.Path]++
		tr.mu.Unlock()
		if f := tr.front.Load(); f != nil && (*f)(w, r) {
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.srv.Close)
	tr.host = strings.TrimPrefix(tr.srv.URL, "http://")
	return tr
}

// setFront installs f in front of the registry; f returns true when it has
// answered the request itself.
func (tr *testRegistry) setFront(f func(w http.ResponseWriter, r *http.Request) bool) {
	tr.front.Store(&f)
}

// reset forgets the counted requests.
func (tr *testRegistry) reset() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.requests = map[string]int{}
	tr.maxSeen.Store(0)
}

// count returns how many requests matched method and a path containing sub.
func (tr *testRegistry) count(method, sub string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for k, v := range tr.requests {
		m, p, _ := strings.Cut(k, " ")
		if m == method && strings.Contains(p, sub) {
			n += v
		}
	}
	return n
}

// snapshot returns a copy of the request counts.
func (tr *testRegistry) snapshot() map[string]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]int, len(tr.requests))
	for k, v := range tr.requests {
		out[k] = v
	}
	return out
}

// ignoreDigest compares platforms without their manifest digests.
var ignoreDigest = cmpopts.IgnoreFields(Platform{}, "Digest")

// ref returns a reference to repo:tag on this registry.
func (tr *testRegistry) ref(repoTag string) string {
	return tr.host + "/" + repoTag
}

// image builds a layerless image with the given config platform and labels.
func image(t testing.TB, os, arch, variant string, labels map[string]string) v1.Image {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS: os, Architecture: arch, Variant: variant,
		Config: v1.Config{Labels: labels},
	})
	if err != nil {
		t.Fatalf("build image: %v", err)
	}
	return img
}

// entry is one manifest of a test index.
type entry struct {
	img         mutate.Appendable
	platform    *v1.Platform
	annotations map[string]string
}

func index(t testing.TB, entries ...entry) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, e := range entries {
		adds = append(adds, mutate.IndexAddendum{Add: e.img, Descriptor: v1.Descriptor{Platform: e.platform, Annotations: e.annotations}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

func (tr *testRegistry) pushImage(t testing.TB, repoTag string, img v1.Image) string {
	t.Helper()
	ref, err := name.ParseReference(tr.ref(repoTag), name.Insecure)
	if err != nil {
		t.Fatalf("parse %s: %v", repoTag, err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", repoTag, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatalf("digest: %v", err)
	}
	return ref.Context().Digest(d.String()).String()
}

func (tr *testRegistry) pushIndex(t testing.TB, repoTag string, idx v1.ImageIndex) string {
	t.Helper()
	ref, err := name.ParseReference(tr.ref(repoTag), name.Insecure)
	if err != nil {
		t.Fatalf("parse %s: %v", repoTag, err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("push %s: %v", repoTag, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatalf("digest: %v", err)
	}
	return ref.Context().Digest(d.String()).String()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// newResolver returns the Resolver of o, failing the test on a bad option.
func newResolver(t testing.TB, o Options) *Resolver {
	t.Helper()
	r, err := NewResolver(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// value reads a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatalf("read metric: %v", err)
	}
	return m.GetCounter().GetValue()
}
