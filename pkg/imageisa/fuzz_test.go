package imageisa

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"runtime"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Fuzz targets: each fails when one input costs more than a fixed budget
// of allocation or time, besides panics. The time bound is generous (a
// loaded machine must not fail it), far below what the shapes these
// targets guard against cost. Seed corpora: testdata/fuzz/<FuzzName>/;
// hack/fuzz.sh runs them all.
const (
	fuzzMaxAlloc = 64 << 20
	fuzzMaxTime  = 5 * time.Second
)

// withinBudget runs fn and fails t when it allocated more than
// fuzzMaxAlloc bytes or ran longer than fuzzMaxTime.
func withinBudget(t *testing.T, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	// An input that never returns is a failure too: the fuzzing engine
	// keeps the input of a worker that crashed.
	hung := time.AfterFunc(4*fuzzMaxTime, func() { panic("one input still running after " + (4 * fuzzMaxTime).String()) })
	defer hung.Stop()
	fn()
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > fuzzMaxAlloc {
		t.Fatalf("one input allocated %d MiB, budget %d MiB", a>>20, fuzzMaxAlloc>>20)
	}
	if d > fuzzMaxTime {
		t.Fatalf("one input took %s, budget %s", d, fuzzMaxTime)
	}
}

func FuzzRISCVAttributes(f *testing.F) {
	f.Add(attrSection(append([]byte{4, 16, attrTagRISCVArch}, "rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_v1p0\x00"...)))
	f.Add(attrSection(bytes.Repeat([]byte{0x80}, 16)))
	f.Add([]byte{'A', 0xff, 0xff, 0xff, 0xff})
	f.Add(attrSectionRaw([]byte{attrTagFile, 2, 0, 0, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		withinBudget(t, func() {
			arch, err := parseRISCVAttributes(data, binary.LittleEndian)
			if err == nil && len(arch) > maxArchStringLen {
				t.Fatalf("arch of %d bytes accepted", len(arch))
			}
		})
	})
}

func FuzzGNUProperties(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 16, 0, 0, 0, 5, 0, 0, 0, 'G', 'N', 'U', 0, 2, 0x80, 0, 0xc0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Add(make([]byte, 4096), false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 5, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, class64 bool) {
		align := 4
		if class64 {
			align = 8
		}
		withinBudget(t, func() {
			_, _ = parseGNUProperties(data, binary.LittleEndian, align)
			_, _ = parseGNUProperties(data, binary.BigEndian, align)
		})
	})
}

func FuzzReadELF(f *testing.F) {
	for _, fx := range []string{"riscv64-rv64gcv_zba_zbb", "amd64-v3-used", "riscv32-rv32imac"} {
		f.Add(fixture(f, fx), true)
		f.Add(fixture(f, fx), false)
	}
	f.Add(manyNotesELF(64)[:elfHeadBytes], false)
	f.Add(manySectionsELF(64), true)
	f.Fuzz(func(t *testing.T, data []byte, whole bool) {
		inMemory := int64(0)
		if whole {
			inMemory = 1 << 20
		}
		withinBudget(t, func() {
			info, err := readELF(bytes.NewReader(data), int64(len(data)), inMemory, 4096)
			if err == nil {
				_, _ = finish(Result{Path: "/app"}, info, "")
			}
		})
	})
}

// FuzzTarIndex reads a fuzzed tar stream as the only layer of an image
// whose program is found through PATH, symlinks and whiteouts: indexing,
// resolve, decide and the file read.
func FuzzTarIndex(f *testing.F) {
	elfBytes := fixture(f, "riscv64-rv64imfd")
	f.Add(tarBytes(f, symlink("bin", "usr/bin"), dir("usr"), dir("usr/bin"), reg("usr/bin/app", elfBytes)))
	f.Add(tarBytes(f, symlink("usr/bin/app", "../../opt/app"), reg("opt/app", elfBytes), whiteout("usr/local/bin", "app")))
	f.Add(tarBytes(f, symlink("usr/bin/app", "app"), opaque("usr"), hardlink("usr/sbin/app", "opt/x")))
	f.Add(sparseTar("usr/bin/app", 1<<40, elfBytes[:64], make([]byte, 512)))
	f.Fuzz(func(t *testing.T, data []byte) {
		img := rawImage{cfg: &v1.ConfigFile{Architecture: "riscv64", Config: v1.Config{Entrypoint: []string{"app"}}}, layer: rawTar(data)}
		withinBudget(t, func() {
			_, _ = infer(context.Background(), img, Limits{Timeout: time.Second, MaxBytes: 8 << 20}, true)
		})
	})
}

// rawImage is a one-layer image of a config and an uncompressed tar
// stream, with no digests: a fuzz input is read as the scanner sees it,
// without compressing it first.
type rawImage struct {
	v1.Image // unused methods
	cfg      *v1.ConfigFile
	layer    v1.Layer
}

func (r rawImage) ConfigFile() (*v1.ConfigFile, error) { return r.cfg, nil }
func (r rawImage) Layers() ([]v1.Layer, error)         { return []v1.Layer{r.layer}, nil }

// rawTar is a layer whose uncompressed stream is the bytes as they are.
type rawTar []byte

func (b rawTar) Uncompressed() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
func (b rawTar) Compressed() (io.ReadCloser, error)   { return b.Uncompressed() }
func (b rawTar) Digest() (v1.Hash, error)             { return v1.Hash{}, nil }
func (b rawTar) DiffID() (v1.Hash, error)             { return v1.Hash{}, nil }
func (b rawTar) Size() (int64, error)                 { return int64(len(b)), nil }
func (b rawTar) MediaType() (types.MediaType, error)  { return types.DockerLayer, nil }
