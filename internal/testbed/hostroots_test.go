package testbed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A host root under a directory only its owner may enter is copied where
// every user can reach it, with its executables and links intact.
func TestStageHostRoots(t *testing.T) {
	private := t.TempDir() // 0700
	root := filepath.Join(private, "paper-node1")
	gcc := filepath.Join(root, "opt", "RISCV", "bin", "riscv64-unknown-linux-gnu-gcc")
	if err := os.MkdirAll(filepath.Dir(gcc), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gcc, []byte("#!/bin/sh\necho rv64gc\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("riscv64-unknown-linux-gnu-gcc", filepath.Join(filepath.Dir(gcc), "gcc")); err != nil {
		t.Fatal(err)
	}
	staged, cleanup, err := StageHostRoots([]string{root, root})
	if err != nil {
		t.Fatal(err)
	}
	copyRoot := staged[root]
	if len(staged) != 1 || copyRoot == "" {
		t.Fatalf("staged %v, want one copy of %s", staged, root)
	}
	// Every directory from the temporary directory down is 0755.
	for dir := filepath.Join(copyRoot, "opt", "RISCV", "bin"); strings.HasPrefix(dir, os.TempDir()+"/"); dir = filepath.Dir(dir) {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o005 != 0o005 {
			t.Errorf("%s is %v: others cannot enter it", dir, info.Mode().Perm())
		}
	}
	info, err := os.Stat(filepath.Join(copyRoot, "opt", "RISCV", "bin", "riscv64-unknown-linux-gnu-gcc"))
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("copied compiler: %v, %v; want mode 0755", info, err)
	}
	if target, err := os.Readlink(filepath.Join(copyRoot, "opt", "RISCV", "bin", "gcc")); err != nil || target != "riscv64-unknown-linux-gnu-gcc" {
		t.Errorf("copied link -> %q, %v", target, err)
	}
	cleanup()
	if _, err := os.Stat(copyRoot); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s: %v", copyRoot, err)
	}
}
