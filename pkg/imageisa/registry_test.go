package imageisa

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// blobCounter counts blob GETs by digest, and the bytes sent for each.
type blobCounter struct {
	next http.Handler
	mu   sync.Mutex
	gets map[string]int
}

func (c *blobCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		if _, dg, ok := strings.Cut(r.URL.Path, "/blobs/"); ok {
			c.mu.Lock()
			c.gets[dg]++
			c.mu.Unlock()
		}
	}
	c.next.ServeHTTP(w, r)
}

func (c *blobCounter) count(h v1.Hash) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[h.String()]
}

// servedImage pushes img to an in-process registry and returns it as a
// remote image, reading blobs over HTTP.
func servedImage(t *testing.T, img v1.Image) (v1.Image, *blobCounter) {
	t.Helper()
	bc := &blobCounter{next: registry.New(registry.Logger(log.New(io.Discard, "", 0))), gets: map[string]int{}}
	srv := httptest.NewServer(bc)
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/test/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	bc.mu.Lock()
	clear(bc.gets)
	bc.mu.Unlock()
	rimg, err := remote.Image(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	return rimg, bc
}

// TestInferFromRegistry checks over the distribution protocol that only the
// layers needed are fetched: the binary in the top layer means the large
// base layer is never requested.
func TestInferFromRegistry(t *testing.T) {
	base := debianLike(t, fixture(t, "riscv64-rv64gc"), 200, 64<<10) // ~13 MiB uncompressed
	mid := layer(t, reg("etc/app.conf", []byte("x=1\n")))
	top := layer(t, reg("usr/local/bin/app", fixture(t, "riscv64-rv64gcv_zba_zbb")))
	cases := []struct {
		name       string
		entrypoint string
		want       map[string]int // blob GETs per layer
	}{
		{name: "binary in the top layer", entrypoint: "app", want: map[string]int{"base": 0, "mid": 0, "top": 1}},
		{name: "binary in the base (the shell)", entrypoint: "/bin/sh", want: map[string]int{"base": 1, "mid": 1, "top": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := image(t, "riscv64", v1.Config{Entrypoint: []string{tc.entrypoint}}, base, mid, top)
			rimg, bc := servedImage(t, img)
			res, err := Infer(t.Context(), rimg, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for k, l := range map[string]v1.Layer{"base": base, "mid": mid, "top": top} {
				dg, err := l.Digest()
				if err != nil {
					t.Fatal(err)
				}
				got[k] = bc.count(dg)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("blob GETs (-want +got):\n%s", d)
			}
			if res.ISA == nil {
				t.Fatalf("no ISA from %s", res.Source())
			}
			t.Logf("%s: %s from %s, %d bytes read in %d streams", tc.name, res.ISA.Short(), res.Source(), res.Work.Bytes, res.Work.Layers)
		})
	}
}

// TestInferStopsEarly checks that a base layer is read only up to the
// binary: the bytes read stay far below the layer's size.
func TestInferStopsEarly(t *testing.T) {
	files := []file{fixtureFile("bin/app", "riscv64-rv64imfd", t)}
	for i := range 100 {
		files = append(files, zeros("var/filler/"+strings.Repeat("f", 1+i%50)+string(rune('a'+i%26)), 256<<10))
	}
	img := image(t, "riscv64", v1.Config{Entrypoint: []string{"/bin/app"}}, layer(t, files...))
	res, err := Infer(t.Context(), img, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Work.Bytes > 64<<10 {
		t.Errorf("read %d bytes of a 25 MiB layer whose first entry is the binary, want under 64 KiB", res.Work.Bytes)
	}
}
