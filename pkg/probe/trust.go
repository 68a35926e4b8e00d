package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrUntrusted is returned by an [ExecRunner] for a binary that someone
// other than root could have replaced: it, or a directory above it, is not
// owned by root or is group- or world-writable.
var ErrUntrusted = errors.New("not safe to run")

// maxSymlinks is the kernel's limit on links followed in one lookup.
const maxSymlinks = 40

// resolveTrusted resolves file inside root as a process chrooted there
// would (absolute link targets start again at root, ".." never leaves it)
// and returns the path of the regular file it names, inside root. Root, the
// file and every directory looked up on the way must pass [checkTrusted].
// A missing component is [ErrNotFound].
func resolveTrusted(root, file string) (string, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("host root %s: %w", root, err)
	}
	if err := checkTrusted("/", fi); err != nil {
		return "", err
	}
	todo := strings.Split(file, "/")
	cur := "/"
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, name)
		host := filepath.Join(root, filepath.FromSlash(next))
		fi, err := os.Lstat(host)
		if errors.Is(err, fs.ErrNotExist) {
			return "", ErrNotFound
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// The link itself cannot be changed by anyone who cannot write
			// its directory, which was checked.
			if links++; links > maxSymlinks {
				return "", fmt.Errorf("%s: more than %d symbolic links", file, maxSymlinks)
			}
			target, err := os.Readlink(host)
			if err != nil {
				return "", err
			}
			if path.IsAbs(target) {
				cur = "/"
			}
			todo = append(strings.Split(target, "/"), todo...)
			continue
		}
		if err := checkTrusted(next, fi); err != nil {
			return "", err
		}
		if len(todo) > 0 && !fi.IsDir() {
			return "", fmt.Errorf("%s: not a directory", next)
		}
		cur = next
	}
	fi, err = os.Stat(filepath.Join(root, filepath.FromSlash(cur)))
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s (%s) is not a regular file", file, cur)
	}
	return cur, nil
}

// checkTrusted refuses a file or directory (named as inside the host root)
// that is not owned by root, or by the user the labeler runs as (who could
// replace the labeler itself), or that is group- or world-writable.
func checkTrusted(name string, fi fs.FileInfo) error {
	uid, ok := fileOwner(fi)
	if !ok {
		return fmt.Errorf("%s: owner unknown on this system: %w", name, ErrUntrusted)
	}
	if uid != 0 && int64(uid) != int64(os.Geteuid()) {
		return fmt.Errorf("%s is owned by uid %d, not root: %w (only root may own a host binary the labeler runs and the directories above it; chown root on the node)",
			name, uid, ErrUntrusted)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s has mode %s, writable by group or others: %w (chmod go-w on the node)",
			name, fi.Mode(), ErrUntrusted)
	}
	return nil
}
