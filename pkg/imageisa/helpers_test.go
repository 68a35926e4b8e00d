package imageisa

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// file is one tar entry of a test layer.
type file struct {
	name string
	typ  byte // tar.TypeReg when 0
	link string
	data []byte
	size int64 // for TypeReg without data: that many zero bytes
}

func reg(name string, data []byte) file  { return file{name: name, data: data} }
func dir(name string) file               { return file{name: name, typ: tar.TypeDir} }
func symlink(name, target string) file   { return file{name: name, typ: tar.TypeSymlink, link: target} }
func hardlink(name, target string) file  { return file{name: name, typ: tar.TypeLink, link: target} }
func zeros(name string, n int64) file    { return file{name: name, size: n} }
func whiteout(dirname, base string) file { return reg(dirname+"/.wh."+base, nil) }
func opaque(dirname string) file         { return reg(dirname+"/.wh..wh..opq", nil) }
func script(name, line string) file      { return reg(name, []byte(line+"\nexec \"$@\"\n")) }
func fixtureFile(name, fx string, t *testing.T) file {
	t.Helper()
	return reg(name, fixture(t, fx))
}

// fixture returns a committed ELF fixture (hack/elf-fixtures.sh).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "elf", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tarBytes(t testing.TB, files ...file) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: f.typ, Linkname: f.link, Mode: 0o755, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(f.data))
			if f.data == nil {
				h.Size = f.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			var err error
			if f.data != nil {
				_, err = tw.Write(f.data)
			} else {
				_, err = io.CopyN(tw, zeroReader{}, f.size)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func layer(t testing.TB, files ...file) v1.Layer {
	t.Helper()
	b := tarBytes(t, files...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// image builds an image from layers given bottom first.
func image(t testing.TB, arch string, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", arch, cfg
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// debianLike is a merged-/usr base layer: /bin -> usr/bin, a shell and
// n filler files of size bytes each.
func debianLike(t testing.TB, sh []byte, n int, size int64) v1.Layer {
	t.Helper()
	files := []file{symlink("bin", "usr/bin"), symlink("lib", "usr/lib"), dir("etc"), dir("usr"), dir("usr/bin"), dir("usr/lib")}
	files = append(files, reg("usr/bin/dash", sh), symlink("usr/bin/sh", "dash"))
	for i := range n {
		files = append(files, zeros(filepath.Join("usr/lib", "f"+strconv.Itoa(i)), size))
	}
	return layer(t, files...)
}
