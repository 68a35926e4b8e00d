package registry

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// TestImage checks that Resolve gives each platform its manifest digest and
// that Image reads that platform's image, layers included, within the byte
// budget: a layer larger than the manifest cap is read when the budget
// allows, and a read past the budget fails as tooLarge.
func TestImage(t *testing.T) {
	tr := newTestRegistry(t)
	big, err := random.Layer(64<<10, "application/vnd.oci.image.layer.v1.tar")
	if err != nil {
		t.Fatal(err)
	}
	rv, err := mutate.AppendLayers(image(t, "linux", "riscv64", "", nil), big)
	if err != nil {
		t.Fatal(err)
	}
	arm := image(t, "linux", "arm64", "", nil)
	tr.pushIndex(t, "app/layers:1", index(t,
		entry{img: rv, platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
		entry{img: arm, platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}))
	rvDigest, _ := rv.Digest()
	armDigest, _ := arm.Digest()

	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, maxManifestBytes: 16 << 10})
	ref := tr.ref("app/layers:1")
	ps, err := r.Resolve(t.Context(), ref, teamA)
	if err != nil {
		t.Fatal(err)
	}
	want := []Platform{
		{OS: "linux", Architecture: "riscv64", Digest: rvDigest.String()},
		{OS: "linux", Architecture: "arm64", Digest: armDigest.String()},
	}
	if diff := cmp.Diff(want, ps); diff != "" {
		t.Fatalf("Resolve (-want +got):\n%s", diff)
	}

	cases := []struct {
		name     string
		p        Platform
		maxBytes int64
		wantKind string // "" : the layer is read whole
	}{
		{name: "by digest", p: ps[0], maxBytes: 1 << 20},
		{name: "by platform, without digest", p: Platform{OS: "linux", Architecture: "riscv64"}, maxBytes: 1 << 20},
		{name: "layer past the budget", p: ps[0], maxBytes: 32 << 10, wantKind: KindTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, err := r.Image(t.Context(), ref, teamA, tc.p, tc.maxBytes)
			if err != nil {
				t.Fatalf("Image: %v", err)
			}
			if d, _ := img.Digest(); d != rvDigest {
				t.Fatalf("Image digest = %s, want %s", d, rvDigest)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("Layers = %d, %v; want 1", len(layers), err)
			}
			rc, err := layers[0].Compressed()
			if err != nil {
				t.Fatalf("Compressed: %v", err)
			}
			defer rc.Close()
			var buf bytes.Buffer
			_, err = io.Copy(&buf, rc)
			if tc.wantKind == "" {
				if err != nil {
					t.Fatalf("read layer: %v", err)
				}
				return
			}
			if got := classify(ref, err); err == nil || got.Kind != tc.wantKind {
				t.Fatalf("read layer: %v, want kind %s", err, tc.wantKind)
			}
			if !errors.Is(err, errTooLarge) {
				t.Fatalf("read layer: %v, want errTooLarge", err)
			}
		})
	}
}
