package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

type entry struct {
	name string
	mode int64
	mod  time.Time
	data string
}

func untar(t *testing.T, data []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out = append(out, entry{h.Name, h.Mode, h.ModTime.UTC(), string(b)})
	}
}

func unzip(t *testing.T, data []byte) []entry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		out = append(out, entry{f.Name, int64(f.Mode().Perm()), f.Modified.UTC(), string(b)})
	}
	return out
}

// TestArchive: the executable and LICENSE, their modes, the epoch as every
// time, the same bytes for the same input.
func TestArchive(t *testing.T) {
	epoch := time.Unix(1700000000, 0).UTC()
	for _, tc := range []struct {
		name, bin string
		read      func(*testing.T, []byte) []entry
	}{
		{"kubectl-isa_linux_amd64.tar.gz", "kubectl-isa", untar},
		{"kubectl-isa_windows_amd64.zip", "kubectl-isa.exe", unzip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := archive(tc.name, tc.bin, []byte("binary"), []byte("licence"), epoch)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.read(t, data)
			want := []entry{{tc.bin, 0o755, epoch, "binary"}, {"LICENSE", 0o644, epoch, "licence"}}
			if !slices.Equal(got, want) {
				t.Errorf("entries %+v, want %+v", got, want)
			}
			again, err := archive(tc.name, tc.bin, []byte("binary"), []byte("licence"), epoch)
			if err != nil || !bytes.Equal(again, data) {
				t.Errorf("a second archive of the same files differs (%v)", err)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"--out", "d"}, want: "--version and --out are required"},
		{args: []string{"--version", "1.0", "--out", "d"}, want: `--version "1.0" is not a release version`},
		{args: []string{"--version", "v1.0.0", "--out", "d", "extra"}, want: `unexpected argument "extra"`},
		{args: []string{"--version", "v1.0.0", "--out", "d"}, env: "yesterday", want: `SOURCE_DATE_EPOCH="yesterday"`},
	} {
		fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		_, err := parseArgs(fs, tc.args, func(string) string { return tc.env })
		if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	o, err := parseArgs(fs, []string{"--version", "v1.0.0", "--out", "d", "--platforms", "linux/amd64, linux/amd64,darwin/arm64"}, func(string) string { return "60" })
	if err != nil || !slices.Equal(o.Platforms, []string{"linux/amd64", "darwin/arm64"}) || !o.Epoch.Equal(time.Unix(60, 0)) {
		t.Errorf("parseArgs = %+v, %v", o, err)
	}
}

func TestPlatformsOf(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "cmd", "kubectl-isa", "krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := platformsOf(tmpl, nil)
	if err != nil || !slices.Contains(all, "linux/riscv64") || !slices.Contains(all, "windows/amd64") {
		t.Errorf("platformsOf(nil) = %v, %v: want every platform of the template", all, err)
	}
	if _, err := platformsOf(tmpl, []string{"plan9/386"}); err == nil || !strings.Contains(err.Error(), `"plan9/386" is not a platform`) {
		t.Errorf("platformsOf(plan9/386) = %v", err)
	}
}
