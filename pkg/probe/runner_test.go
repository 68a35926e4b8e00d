package probe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFile writes body to root/rel with mode, creating parents 0755.
func writeFile(t *testing.T, root, rel, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecRunnerRefusesUntrusted(t *testing.T) {
	const script = "#!/bin/sh\necho ok\n"
	tests := []struct {
		name     string
		setup    func(t *testing.T, root string)
		file     string // default /usr/bin/gcc
		rootOnly bool
		want     string // "" means the command runs
	}{
		{name: "root-owned, not writable", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/bin/gcc", script, 0o755)
		}},
		{name: "world-writable parent directory", file: "/usr/local/bin/gcc", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/local/bin/gcc", script, 0o755)
			chmod(t, filepath.Join(root, "usr/local"), 0o777)
		}, want: "/usr/local has mode drwxrwxrwx, writable by group or others"},
		{name: "world-writable sticky directory", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/bin/gcc", script, 0o755)
			chmod(t, filepath.Join(root, "usr/bin"), 0o777|os.ModeSticky)
		}, want: "/usr/bin has mode dtrwxrwxrwx, writable by group or others"},
		{name: "group-writable binary", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/bin/gcc", script, 0o775)
		}, want: "/usr/bin/gcc has mode -rwxrwxr-x, writable by group or others"},
		{name: "group-writable host root", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/bin/gcc", script, 0o755)
			chmod(t, root, 0o775)
		}, want: "/ has mode drwxrwxr-x"},
		{name: "link into a world-writable directory", setup: func(t *testing.T, root string) {
			writeFile(t, root, "tmp/gcc", script, 0o755)
			chmod(t, filepath.Join(root, "tmp"), 0o777|os.ModeSticky)
			symlink(t, "/tmp/gcc", filepath.Join(root, "usr/bin/gcc"))
		}, want: "/tmp has mode dtrwxrwxrwx"},
		{name: "relative links resolve inside the root", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/lib/gcc-12/gcc", script, 0o755)
			symlink(t, "../lib/gcc-12/gcc", filepath.Join(root, "usr/bin/gcc"))
		}},
		{name: "absolute links resolve inside the root", setup: func(t *testing.T, root string) {
			writeFile(t, root, "usr/lib/gcc-12/gcc", script, 0o755)
			symlink(t, "/../../usr/lib/gcc-12/gcc", filepath.Join(root, "usr/bin/gcc"))
		}},
		{name: "binary owned by another user", rootOnly: true, setup: func(t *testing.T, root string) {
			p := writeFile(t, root, "usr/bin/gcc", script, 0o755)
			chown(t, p, 1234)
		}, want: "/usr/bin/gcc is owned by uid 1234, not root"},
		{name: "directory owned by another user", file: "/opt/RISCV/bin/gcc", rootOnly: true, setup: func(t *testing.T, root string) {
			writeFile(t, root, "opt/RISCV/bin/gcc", script, 0o755)
			chown(t, filepath.Join(root, "opt/RISCV"), 1000)
		}, want: "/opt/RISCV is owned by uid 1000, not root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rootOnly && os.Geteuid() != 0 {
				t.Skip("chown needs root")
			}
			root := t.TempDir()
			chmod(t, root, 0o755)
			tc.setup(t, root)
			file := tc.file
			if file == "" {
				file = "/usr/bin/gcc"
			}
			out, err := (&ExecRunner{Root: root}).Run(t.Context(), file)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Run(): %v", err)
				}
				if diff := cmp.Diff("ok\n", string(out)); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run() error = %v, want ErrUntrusted naming %q", err, tc.want)
			}
		})
	}
}

func TestPrepareHostRoot(t *testing.T) {
	root := t.TempDir()
	chmod(t, root, 0o777) // as an emptyDir is
	if err := os.Mkdir(filepath.Join(root, "lib"), 0o755); err != nil {
		t.Fatal(err) // as if the host's /lib were mounted
	}
	for range 2 {
		if err := PrepareHostRoot(root); err != nil {
			t.Fatalf("PrepareHostRoot(): %v", err)
		}
	}
	got := map[string]string{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = fi.Mode().String()
		if target, err := os.Readlink(p); err == nil {
			got[e.Name()] += " -> " + target
		}
	}
	fi, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	got["."] = fi.Mode().String()
	want := map[string]string{
		".":     "drwxr-xr-x",
		"bin":   "Lrwxrwxrwx -> usr/bin",
		"sbin":  "Lrwxrwxrwx -> usr/sbin",
		"lib":   "drwxr-xr-x",
		"lib64": "Lrwxrwxrwx -> usr/lib64",
		"tmp":   "dtrwxrwxrwx",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host root (-want +got):\n%s", diff)
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, p string, uid int) {
	t.Helper()
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
