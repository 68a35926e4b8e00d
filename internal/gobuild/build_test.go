package gobuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBinariesRefuses(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		pkgs    []string
		wantErr string
	}{
		{"no packages", Options{}, nil, "no packages"},
		{"cross build without AsImage", Options{GOOS: "linux", GOARCH: "riscv64"}, []string{"./cmd/labeler"}, "needs Options.AsImage"},
		{"version with a space", Options{Version: "v1 beta"}, []string{"./cmd/labeler"}, `version "v1 beta": want no spaces`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Binaries(t.Context(), ".", t.TempDir(), tc.opts, tc.pkgs...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Binaries error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestBinaries builds a tiny module so the test does not compile the
// project's dependency graph.
func TestBinaries(t *testing.T) {
	mod := t.TempDir()
	writeFile(t, filepath.Join(mod, "go.mod"), "module example.com/tiny\n\ngo 1.22\n")
	writeFile(t, filepath.Join(mod, "cmd", "one", "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(mod, "cmd", "two", "main.go"), "package main\n\nfunc main() {}\n")
	for _, o := range []Options{{}, {AsImage: true}, {AsImage: true, GOOS: "linux", GOARCH: "riscv64"}} {
		dir := t.TempDir()
		got, err := Binaries(t.Context(), mod, dir, o, "./cmd/one", "./cmd/two")
		if err != nil {
			t.Fatalf("Binaries(%+v): %v", o, err)
		}
		want := []string{filepath.Join(dir, "one"), filepath.Join(dir, "two")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Binaries(%+v) paths (-want +got):\n%s", o, diff)
		}
		for _, p := range got {
			if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("Binaries(%+v): %s is not an executable file (%v)", o, p, err)
			}
		}
	}
}

// TestBinariesLinksVersion builds a stand-in of internal/buildinfo in
// a module of the project's path and runs it.
func TestBinariesLinksVersion(t *testing.T) {
	mod := t.TempDir()
	writeFile(t, filepath.Join(mod, "go.mod"), "module github.com/isamatch/isamatch\n\ngo 1.22\n")
	writeFile(t, filepath.Join(mod, "internal", "buildinfo", "b.go"), "package buildinfo\n\nvar version, revision string\n\nfunc Get() string { return version + \" \" + revision }\n")
	writeFile(t, filepath.Join(mod, "cmd", "v", "main.go"),
		"package main\n\nimport \"github.com/isamatch/isamatch/internal/buildinfo\"\n\nfunc main() { print(buildinfo.Get()) }\n")
	got, err := Binaries(t.Context(), mod, t.TempDir(), Options{AsImage: true, Version: "v1.2.3", Revision: "abc123"}, "./cmd/v")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), got[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("run %s: %v\n%s", got[0], err, out)
	}
	if diff := cmp.Diff("v1.2.3 abc123", string(out)); diff != "" {
		t.Errorf("linked version and revision (-want +got):\n%s", diff)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLinkerFlagsOrder: the -ldflags text is recorded in the binary, so the
// same options must always give the same text.
func TestLinkerFlagsOrder(t *testing.T) {
	o := Options{Version: "v1.2.3", Revision: "abc123"}
	want := "-s -w -X " + buildinfoPkg + ".version=v1.2.3 -X " + buildinfoPkg + ".revision=abc123"
	for range 32 {
		got, err := linkerFlags(o)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("linkerFlags (-want +got):\n%s", diff)
		}
	}
}
