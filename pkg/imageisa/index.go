package imageisa

import (
	"archive/tar"
	"fmt"
	"path"
	"strings"
)

// OCI whiteout markers (image-spec layer.md).
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
	maxPathLen     = 4096
	// maxPathDepth caps the components of a path resolved, and of the
	// paths an index keeps: lookups walk every ancestor, so their cost
	// grows with the square of the depth. Real images nest a few dozen
	// levels at most.
	maxPathDepth = 128
	// entryCost is the fixed memory an index entry costs by estimate (map
	// slot, string header, entry), on top of its name and link.
	entryCost = 96
)

type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindSymlink
	kindHardlink
	kindWhiteout
	kindOther
)

// entry is what one layer holds at one path: no content, only its kind and
// link target.
type entry struct {
	kind kind
	link string
}

// layerIndex is the metadata of one layer's tar stream, complete once the
// stream was read to its end.
type layerIndex struct {
	entries  map[string]entry
	opaque   map[string]bool
	complete bool
	// bytes is the memory the index holds by estimate.
	bytes int64
}

// set records e at p, counting the memory a new path costs.
func (ix *layerIndex) set(p string, e entry) {
	if _, ok := ix.entries[p]; !ok {
		ix.bytes += entryCost + int64(len(p)+len(e.link))
	}
	ix.entries[p] = e
}

// depth is the number of components of the clean absolute path p.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// truncate cuts the clean absolute path p to its first n components.
func truncate(p string, n int) string {
	k := 0
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			if k++; k == n {
				return p[:i]
			}
		}
	}
	return p
}

func newLayerIndex() *layerIndex {
	return &layerIndex{entries: map[string]entry{}, opaque: map[string]bool{}}
}

// add records one tar header and returns the path it concerns ("" when it
// concerns none, e.g. the root or an over-long name).
func (ix *layerIndex) add(h *tar.Header) string {
	if len(h.Name) > maxPathLen {
		return ""
	}
	p := path.Join("/", h.Name)
	if p == "/" {
		return ""
	}
	if depth(p) > maxPathDepth {
		// Only its ancestors can matter: no path that deep is resolved.
		p = truncate(p, maxPathDepth)
		ix.parents(path.Dir(p))
		if e, ok := ix.entries[p]; !ok || e.kind == kindWhiteout {
			ix.set(p, entry{kind: kindDir})
		}
		return p
	}
	dir, base := path.Split(p)
	dir = path.Clean(dir)
	ix.parents(dir)
	switch {
	case base == whiteoutOpaque:
		if !ix.opaque[dir] {
			ix.opaque[dir] = true
			ix.bytes += entryCost
		}
		return dir
	case strings.HasPrefix(base, whiteoutPrefix):
		w := path.Join(dir, base[len(whiteoutPrefix):])
		// An entry of the same layer stays visible (image-spec).
		if _, ok := ix.entries[w]; !ok {
			ix.set(w, entry{kind: kindWhiteout})
		}
		return w
	}
	var e entry
	switch h.Typeflag {
	case tar.TypeDir:
		e.kind = kindDir
	case tar.TypeReg: // tar.Reader reports the legacy TypeRegA as TypeReg
		e.kind = kindFile
	case tar.TypeSymlink, tar.TypeLink:
		if len(h.Linkname) > maxPathLen {
			e.kind = kindOther // a target no lookup could follow
			break
		}
		e.kind, e.link = kindSymlink, h.Linkname
		if h.Typeflag == tar.TypeLink {
			e.kind, e.link = kindHardlink, path.Join("/", h.Linkname)
		}
	default:
		e.kind = kindOther
	}
	ix.set(p, e)
	return p
}

// parents records the directories a tar entry implies: archives need not
// list them. It stops at the first one known, whose parents were recorded
// with it.
func (ix *layerIndex) parents(dir string) {
	for d := dir; d != "/"; d = path.Dir(d) {
		if _, ok := ix.entries[d]; ok {
			return
		}
		ix.set(d, entry{kind: kindDir})
	}
}

type lookupState uint8

const (
	stateUnknown lookupState = iota // a layer not read to its end may still say
	stateFound
	stateAbsent
)

// lookup finds the topmost entry for the absolute path p over the indexed
// layers (top first), as overlayfs would: a whiteout or a non-directory at p
// or at an ancestor hides the lower layers, an opaque ancestor hides the
// lower layers' contents. A layer not read to its end answers unknown for
// what it does not hold yet; so do layers not read at all.
func (sc *scanner) lookup(p string) (entry, int, lookupState) {
	for i, ix := range sc.idx {
		if sc.ctx.Err() != nil {
			// The caller (resolve) checks the context before its next step.
			return entry{}, i, stateUnknown
		}
		for a := path.Dir(p); a != "/"; a = path.Dir(a) {
			e, ok := ix.entries[a]
			if !ok || e.kind == kindDir {
				continue
			}
			if e.kind == kindWhiteout && !ix.complete {
				return entry{}, i, stateUnknown
			}
			return entry{}, i, stateAbsent
		}
		if e, ok := ix.entries[p]; ok {
			if e.kind != kindWhiteout {
				return e, i, stateFound
			}
			if ix.complete {
				return entry{}, i, stateAbsent
			}
		}
		if !ix.complete {
			return entry{}, i, stateUnknown
		}
		for a := path.Dir(p); ; a = path.Dir(a) {
			if ix.opaque[a] {
				return entry{}, i, stateAbsent
			}
			if a == "/" {
				break
			}
		}
	}
	if len(sc.idx) < len(sc.layers) {
		return entry{}, len(sc.idx), stateUnknown
	}
	return entry{}, len(sc.idx), stateAbsent
}

// located is a regular file found in the merged view: the layer and path
// that hold its content, and the path it was found at.
type located struct {
	layer   int
	content string
	path    string
}

// resolve resolves an absolute path in the merged view, following symlinks
// (absolute ones from the root, relative ones from their directory, ".."
// stopping at the root) up to MaxSymlinks hops. It returns the path whose
// lookup was unknown when the layers read so far cannot tell.
func (sc *scanner) resolve(target string) (located, string, lookupState, error) {
	p := path.Clean(target)
	for hops := 0; ; hops++ {
		if hops > sc.lim.MaxSymlinks {
			return located{}, "", 0, fmt.Errorf("%w: more than %d symlinks resolving %s", ErrLimit, sc.lim.MaxSymlinks, sanitize(target))
		}
		if err := sc.ctx.Err(); err != nil {
			return located{}, "", 0, sc.ctxErr()
		}
		if d := depth(p); d > maxPathDepth {
			return located{}, "", 0, fmt.Errorf("%w: path of %d components resolving %s, limit %d", ErrLimit, d, sanitize(target), maxPathDepth)
		}
		comps := strings.Split(strings.TrimPrefix(p, "/"), "/")
		cur, redirected := "/", false
		for k, c := range comps {
			if err := sc.ctx.Err(); err != nil {
				return located{}, "", 0, sc.ctxErr()
			}
			next := path.Join(cur, c)
			last := k == len(comps)-1
			e, layer, st := sc.lookup(next)
			switch st {
			case stateUnknown:
				return located{}, next, stateUnknown, nil
			case stateAbsent:
				return located{}, "", stateAbsent, nil
			}
			switch e.kind {
			case kindDir:
				if last {
					return located{}, "", stateAbsent, nil
				}
				cur = next
				continue
			case kindSymlink:
				base := cur
				if strings.HasPrefix(e.link, "/") {
					base = "/"
				}
				p = path.Join(append([]string{"/", base, e.link}, comps[k+1:]...)...)
				redirected = true
			case kindFile:
				if !last {
					return located{}, "", stateAbsent, nil
				}
				return located{layer: layer, content: next, path: next}, "", stateFound, nil
			case kindHardlink:
				if !last {
					return located{}, "", stateAbsent, nil
				}
				return located{layer: layer, content: e.link, path: next}, "", stateFound, nil
			default:
				return located{}, "", stateAbsent, nil
			}
			break
		}
		if !redirected {
			return located{}, "", stateAbsent, nil
		}
	}
}

// decide picks among a program's PATH candidates: the first one in PATH
// order that exists, once every earlier one is known absent. Deviation from
// execvp, to stop early: a candidate found in a layer read to its end is
// taken even when earlier candidates are unknown because lower layers were
// not read, i.e. the topmost layer holding the program wins, then PATH
// order. When it cannot decide yet it returns the unknown paths to watch,
// and the candidate found so far, if any, that waits for them.
func (sc *scanner) decide(candidates []string) (located, []string, lookupState, error) {
	var waiting []string
	for _, c := range candidates {
		loc, w, st, err := sc.resolve(c)
		if err != nil {
			return located{}, nil, 0, err
		}
		switch st {
		case stateFound:
			if len(waiting) == 0 || sc.idx[loc.layer].complete {
				return loc, nil, stateFound, nil
			}
			return loc, waiting, stateUnknown, nil
		case stateUnknown:
			waiting = append(waiting, w)
		}
	}
	if len(waiting) > 0 {
		return located{}, waiting, stateUnknown, nil
	}
	return located{}, nil, stateAbsent, nil
}
