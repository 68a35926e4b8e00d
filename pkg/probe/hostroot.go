package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// mergedUsrLinks are the top-level links of a merged-/usr host (Debian 12,
// Ubuntu, Fedora, RHEL): the dynamic loader (/lib64/ld-linux-x86-64.so.2,
// /lib/ld-linux-aarch64.so.1, /lib/ld-linux-riscv64-lp64d.so.1) and the
// libraries a compiler loads are found through them when only the host's
// /usr is mounted.
var mergedUsrLinks = []struct{ name, target string }{
	{"bin", "usr/bin"},
	{"sbin", "usr/sbin"},
	{"lib", "usr/lib"},
	{"lib64", "usr/lib64"},
}

// PrepareHostRoot makes root, a writable directory (the labeler's emptyDir
// at /host) in which the host's /usr, /opt/RISCV, /proc/cpuinfo and
// binfmt_misc are mounted read-only, usable as the compilers' chroot: root
// becomes mode 0755 (an emptyDir is world-writable), the merged-/usr links
// bin, sbin, lib and lib64 are created where nothing is mounted, and tmp
// (mode 1777) is created, since gcc writes its temporary files there even
// for -Q --help=target. Whatever already exists is left alone, so on a
// read-only host root that has them all it writes nothing.
func PrepareHostRoot(root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("prepare host root: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		if err := os.Chmod(root, perm&^0o022); err != nil {
			return fmt.Errorf("prepare host root: %w", err)
		}
	}
	for _, l := range mergedUsrLinks {
		p := filepath.Join(root, l.name)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Symlink(l.target, p); err != nil {
			return fmt.Errorf("prepare host root: %w", err)
		}
	}
	tmp := filepath.Join(root, "tmp")
	if _, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return fmt.Errorf("prepare host root: %w", err)
		}
		if err := os.Chmod(tmp, 0o777|fs.ModeSticky); err != nil {
			return fmt.Errorf("prepare host root: %w", err)
		}
	}
	return nil
}
