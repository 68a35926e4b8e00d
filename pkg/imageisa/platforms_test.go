package imageisa

import (
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/registry"
)

// TestPlatforms reads platforms as registry.Resolver returns them, over the
// distribution protocol: the requirement of each, and no blob fetched again
// for a digest already scanned.
func TestPlatforms(t *testing.T) {
	bc := &blobCounter{next: ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))), gets: map[string]int{}}
	srv := httptest.NewServer(bc)
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
	cfg := v1.Config{Entrypoint: []string{"/usr/bin/app"}}
	vector := push("elf/vector:1", image(t, "riscv64", cfg, layer(t, dir("usr"), dir("usr/bin"), reg("usr/bin/app", fixture(t, "riscv64-rv64imfdv")))))
	silent := push("elf/silent:1", image(t, "riscv64", cfg, layer(t, dir("usr"), dir("usr/bin"), reg("usr/bin/app", fixture(t, "riscv64-noattr")))))
	missing := push("elf/missing:1", image(t, "riscv64", v1.Config{Entrypoint: []string{"/nope"}}, layer(t, reg("etc/x", []byte("x")))))

	res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}, AllowedRegistries: []string{"127.0.0.1"}})
	m := NewMetrics()
	ps := NewPlatforms(NewInferrer(Options{CacheBytes: 1 << 20, Metrics: m}), res)
	auth := registry.PullAuth{Namespace: "team-a"}
	cases := []struct {
		name    string
		ref     string
		wantISA string // Compact of the ISA, "" for none
		wantSrc string
		wantErr error
	}{
		{name: "vector binary", ref: vector, wantISA: "rv64imfdv", wantSrc: "ELF of /usr/bin/app"},
		{name: "binary without attributes", ref: silent, wantSrc: "ELF of /usr/bin/app"},
		{name: "missing entrypoint", ref: missing, wantErr: ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plats, err := res.Resolve(t.Context(), tc.ref, auth)
			if err != nil || len(plats) != 1 || plats[0].Digest == "" {
				t.Fatalf("Resolve = %+v, %v; want one platform with a digest", plats, err)
			}
			if _, _, ok := ps.Cached(tc.ref, plats[0]); ok {
				t.Fatal("Cached before any scan: ok")
			}
			for round := range 2 { // the second from the cache
				before := bc.total()
				r, err := ps.Infer(t.Context(), tc.ref, auth, plats[0])
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("round %d: Infer error = %v, want %v", round, err, tc.wantErr)
					}
				} else if err != nil {
					t.Fatalf("round %d: Infer: %v", round, err)
				}
				got := ""
				if r.ISA != nil {
					got = r.ISA.Compact()
				}
				if diff := cmp.Diff([2]string{tc.wantISA, tc.wantSrc}, [2]string{got, sourceOf(r)}); diff != "" {
					t.Errorf("round %d: ISA, source (-want +got):\n%s", round, diff)
				}
				if round == 1 && bc.total() != before {
					t.Errorf("round 2 fetched %d blobs, want none (cached by digest)", bc.total()-before)
				}
			}
		})
	}
}

func sourceOf(r Result) string {
	if r.Path == "" {
		return ""
	}
	return r.Source()
}

func (c *blobCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.gets {
		n += v
	}
	return n
}
