package testbed

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// StageHostRoots copies each host root (a directory) into a new directory
// every user can traverse (0755 all the way from the system's temporary
// directory) and returns the copies by original path, and a func that
// removes them.
//
// The labeler runs as root but runs host commands (the fake compilers of a
// fixture) as an unprivileged user, as it does on a node. A clone of the
// repository under a directory only root may enter (/root, a mktemp -d)
// would leave those commands unreachable, and the nodes they make emulate
// or cross-compile would get no emulation labels. The demo and the labeler
// suite label from such copies.
func StageHostRoots(roots []string) (map[string]string, func(), error) {
	dir, err := os.MkdirTemp("", "isamatch-hostroots-")
	if err != nil {
		return nil, nil, fmt.Errorf("create host root copies: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("make %s traversable: %w", dir, err)
	}
	out := map[string]string{}
	for _, root := range roots {
		if _, ok := out[root]; ok {
			continue
		}
		dst := filepath.Join(dir, fmt.Sprint(len(out)))
		if err := copyTree(root, dst); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("copy host root %s: %w", root, err)
		}
		out[root] = dst
	}
	return out, cleanup, nil
}

// copyTree copies src to dst: directories 0755, files with their mode,
// symbolic links as links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil // sockets, devices: no fixture has them
	})
}

func copyFile(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
