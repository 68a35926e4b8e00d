package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// maxInterpreterBytes bounds the interpreter file hashed (QEMU's static
// user-mode emulators are 5 to 30 MiB).
const maxInterpreterBytes = 512 << 20

// digestMemo remembers the SHA-256 of interpreter files by path, size and
// modification time, so an unchanged file is hashed once.
type digestMemo struct {
	mu   sync.Mutex
	byID map[string]string
}

// of returns the hex SHA-256 of the file at p (absolute on the host)
// inside fsys, following symbolic links as the host would, and a note for
// reports; digest is "" when the file cannot be read (the handler is then
// probed on every pass).
func (m *digestMemo) of(fsys fs.FS, p string) (digest, note string) {
	name, err := resolveFS(fsys, p)
	if err != nil {
		return "", fmt.Sprintf("interpreter not readable in the host root: %v; probed on every pass", err)
	}
	fi, err := fs.Stat(fsys, name)
	if err != nil || !fi.Mode().IsRegular() {
		return "", "interpreter not a regular file in the host root; probed on every pass"
	}
	if fi.Size() > maxInterpreterBytes {
		return "", fmt.Sprintf("interpreter is %d bytes, more than the %d hashed; probed on every pass", fi.Size(), maxInterpreterBytes)
	}
	id := fmt.Sprintf("%s\x00%d\x00%d", name, fi.Size(), fi.ModTime().UnixNano())
	m.mu.Lock()
	d, ok := m.byID[id]
	m.mu.Unlock()
	if !ok {
		if d, err = hashFile(fsys, name); err != nil {
			return "", fmt.Sprintf("interpreter not hashed: %v; probed on every pass", err)
		}
		m.mu.Lock()
		if m.byID == nil || len(m.byID) >= maxHandlers {
			m.byID = map[string]string{}
		}
		m.byID[id] = d
		m.mu.Unlock()
	}
	return d, "sha256 " + d[:12]
}

func hashFile(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxInterpreterBytes)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// resolveFS resolves the absolute host path p inside fsys as the host
// would: symbolic links are followed (absolute targets start again at the
// root of fsys, ".." never leaves it). It returns a name valid in fsys.
// Without fs.ReadLinkFS, p is used as it is.
func resolveFS(fsys fs.FS, p string) (string, error) {
	rl, ok := fsys.(fs.ReadLinkFS)
	todo := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "."
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		if ok {
			fi, err := rl.Lstat(next)
			if err != nil {
				return "", err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				if links++; links > maxSymlinks {
					return "", fmt.Errorf("%s: more than %d symbolic links", p, maxSymlinks)
				}
				target, err := rl.ReadLink(next)
				if err != nil {
					return "", err
				}
				if path.IsAbs(target) {
					cur = "."
				}
				todo = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), todo...)
				continue
			}
		}
		cur = next
	}
	if cur == "." {
		return "", errors.New("names the root")
	}
	return cur, nil
}
