package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/isamatch/isamatch/hack/probes"
)

// TestProbeProgramsLayer: an app with ProbePrograms gets a second layer
// holding every probe program at /probes/<arch>/<name>, an ELF of that
// architecture, root-owned and 0755, stamped with the epoch; the same
// sources give the same layer. It needs the cross binutils (hack/deps.sh):
// skipped without them, failed under CI=true.
func TestProbeProgramsLayer(t *testing.T) {
	cfg := testConfig(t)
	cfg.Platforms = []Platform{{OS: "linux", Arch: "amd64"}}
	app := helloApp
	app.ProbePrograms = true
	idx, err := buildIndex(t.Context(), cfg, app)
	if err != nil && strings.Contains(err.Error(), "not found: install binutils-") && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	img := onlyImage(t, idx)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("got %d layers, want the binary's and the probe programs'", len(layers))
	}
	got := map[string]bool{}
	for name, e := range tarFiles(t, layers[1]) {
		if e.uid != 0 || e.gid != 0 || e.mode != 0o755 || !e.modTime.Equal(cfg.Epoch) {
			t.Errorf("%s: uid %d gid %d mode %o time %s, want 0 0 755 %s", name, e.uid, e.gid, e.mode, e.modTime, cfg.Epoch)
		}
		if e.typeflag != tar.TypeReg {
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(e.data))
		if err != nil {
			t.Errorf("%s: not an ELF: %v", name, err)
			continue
		}
		arch := strings.Split(name, "/")[1]
		if f.Machine != wantMachine[arch] || f.Type != elf.ET_EXEC {
			t.Errorf("%s: %s %s, want an executable for %s", name, f.Machine, f.Type, arch)
		}
		got[name] = true
	}
	for _, p := range probes.Programs() {
		if name := "probes/" + p.Arch + "/" + p.Name; !got[name] {
			t.Errorf("%s missing from the layer", name)
		}
	}

	cfg.WorkDir = t.TempDir()
	again, err := buildIndex(t.Context(), cfg, app)
	if err != nil {
		t.Fatal(err)
	}
	l1, _ := layers[1].Digest()
	layers2, err := onlyImage(t, again).Layers()
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := layers2[1].Digest(); l1 != l2 {
		t.Errorf("probe programs layer %s, then %s: not reproducible", l1, l2)
	}
}

// onlyImage is the single image of a one-platform index.
func onlyImage(t *testing.T, idx v1.ImageIndex) v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%d manifests, want 1", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
