package mutate

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ggcrmutate "github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// testRegistry is an in-process OCI registry with a few images:
// app:multi (linux/amd64 + linux/riscv64 labelled isa.request=rv64imfdv),
// app:amd64 and app:riscv64 (single manifests) and app:rva23
// (linux/riscv64/rva23u64).
func testRegistry(t testing.TB) (host string) {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	img := func(arch, variant string, labels map[string]string) v1.Image {
		i, err := ggcrmutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: arch, Variant: variant, Config: v1.Config{Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	ref := func(tag string) name.Reference {
		r, err := name.ParseReference(host+"/app:"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	idx := ggcrmutate.AppendManifests(empty.Index,
		ggcrmutate.IndexAddendum{Add: img("amd64", "", nil), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		ggcrmutate.IndexAddendum{Add: img("riscv64", "", map[string]string{"isa.request": "rv64imfdv"}), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}}},
	)
	if err := remote.WriteIndex(ref("multi"), idx); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref("amd64"), img("amd64", "", nil)); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref("riscv64"), img("riscv64", "", nil)); err != nil {
		t.Fatal(err)
	}
	rva := ggcrmutate.AppendManifests(empty.Index,
		ggcrmutate.IndexAddendum{Add: img("riscv64", "rva23u64", nil), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}}},
	)
	if err := remote.WriteIndex(ref("rva23"), rva); err != nil {
		t.Fatal(err)
	}
	return host
}

// TestHandleWithRegistry runs the handler with the real resolver against a
// real registry protocol.
func TestHandleWithRegistry(t *testing.T) {
	host := testRegistry(t)
	nodes := testnodes.Paper(t)
	nodes["node8"] = testnodes.Labels(t, "riscv64", "rva23u64")
	res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}})
	m := NewPodMutator(res, inventory.NewStatic(nodes), Options{})
	tests := []struct {
		name          string
		pod           podSpec
		wantPlacement map[string]int32
		wantWarnings  []string
	}{
		{
			name:          "index with an image label: riscv64 needs rv64imfdv, amd64 any",
			pod:           podSpec{images: []string{host + "/app:multi"}},
			wantPlacement: map[string]int32{"node1": 99, "node4": 40, "node5": 100, "node6": 100, "node8": 16},
		},
		{
			name:          "pod request overrides the image label",
			pod:           podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{host + "/app:multi"}},
			wantPlacement: map[string]int32{"node3": 100, "node5": 40, "node6": 40, "node4": 16, "node8": 6},
		},
		{
			name:          "single manifest",
			pod:           podSpec{images: []string{host + "/app:amd64"}},
			wantPlacement: map[string]int32{"node1": 100},
		},
		{
			name:          "platform variant",
			pod:           podSpec{images: []string{host + "/app:rva23"}},
			wantPlacement: map[string]int32{"node8": 100},
		},
		{
			name:          "missing image: warning, the rest decides",
			pod:           podSpec{images: []string{host + "/app:amd64", host + "/app:nope"}},
			wantPlacement: map[string]int32{"node1": 100},
			wantWarnings:  []string{`isamatch: image "` + host + `/app:nope": platforms unknown (notFound`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissionRequest(t, tc.pod.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			if diff := cmp.Diff(tc.wantPlacement, testnodes.Placement(applyPatch(t, req, resp), nodes)); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
			if len(resp.Warnings) != len(tc.wantWarnings) {
				t.Fatalf("warnings = %q, want %q", resp.Warnings, tc.wantWarnings)
			}
			for k, w := range tc.wantWarnings {
				if !strings.HasPrefix(resp.Warnings[k], w) {
					t.Errorf("warning %q, want prefix %q", resp.Warnings[k], w)
				}
			}
		})
	}
}

// cachingFake answers Cached for the references in cached and counts the
// Resolve calls of the rest.
type cachingFake struct {
	*fakeResolver
	cached map[string]bool
}

func (c cachingFake) Cached(ref string, auth registry.PullAuth) ([]registry.Platform, bool, error) {
	if !c.cached[ref] {
		return nil, false, nil
	}
	img := c.images[ref]
	return img.platforms, true, img.err
}

// TestHandleAsksTheCacheFirst: images a cachedResolver has in memory are
// not looked up again, the others are, and the decision uses both.
func TestHandleAsksTheCacheFirst(t *testing.T) {
	tests := []struct {
		name        string
		cached      []string
		wantResolve int64
	}{
		{name: "nothing cached", wantResolve: 3},
		{name: "some cached", cached: []string{"riscv:1", "amd64:1"}, wantResolve: 1},
		{name: "all cached", cached: []string{"riscv:1", "multi:1", "amd64:1"}, wantResolve: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := cachingFake{fakeResolver: &fakeResolver{images: testImages()}, cached: map[string]bool{}}
			for _, r := range tc.cached {
				fake.cached[r] = true
			}
			m := NewPodMutator(fake, inventory.NewStatic(testnodes.Paper(t)), Options{})
			pod := podSpec{images: []string{"riscv:1", "multi:1"}, initImages: []string{"amd64:1"}}.pod()
			resp := m.Handle(t.Context(), admissionRequest(t, pod))
			if got := fake.calls.Load(); got != tc.wantResolve {
				t.Errorf("Resolve calls = %d, want %d", got, tc.wantResolve)
			}
			// amd64:1 and riscv:1 share no architecture: every image was
			// seen, cached or not.
			if resp.Allowed || !strings.Contains(resp.Result.Message, "no common architecture") {
				t.Errorf("allowed=%v message=%q, want the no-common-architecture denial", resp.Allowed, resp.Result.Message)
			}
		})
	}
}
