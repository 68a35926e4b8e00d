package imageisa

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var errTimeout = errors.New("time limit")

// scanner reads the layers of one image, top first, within its limits. It
// keeps the metadata of the layers read so far, so that a second program
// (a wrapper script's argument) reuses it.
type scanner struct {
	ctx    context.Context
	layers []v1.Layer // top first
	lim    Limits
	idx    []*layerIndex // the layers read so far, top first
	parsed map[fileKey]parsed
	work   Work
	// verify drains each layer stream to its end, through the digest
	// check of the layer's reader, after the scan is done with it.
	verify bool
	// mem is the memory the scan holds by estimate: its indexes and the
	// ELF file read whole, if any (see charge).
	mem int64
	// speculative counts files parsed because they sat beside a path
	// being waited for.
	speculative int
}

// maxSpeculative bounds the files parsed beside a waited-for path per
// image; each keeps only a small elfInfo.
const maxSpeculative = 256

type fileKey struct {
	layer int
	path  string
}

type parsed struct {
	info elfInfo
	err  error
}

func newScanner(ctx context.Context, layers []v1.Layer, lim Limits, verify bool) *scanner {
	top := slices.Clone(layers)
	slices.Reverse(top)
	return &scanner{ctx: ctx, layers: top, lim: lim, verify: verify, parsed: map[fileKey]parsed{}}
}

// charge adds n bytes (negative: releases them) to the memory the scan
// holds, failing when that passes MaxMemory.
func (sc *scanner) charge(n int64) error {
	sc.mem += n
	if n > 0 && sc.mem > sc.lim.MaxMemory {
		return fmt.Errorf("%w: scan would hold %d bytes of memory, limit %d", ErrLimit, sc.mem, sc.lim.MaxMemory)
	}
	return nil
}

// find locates the first of candidates that exists (see decide) and reads
// its ELF records. It reads layers only until it can decide, and reads a
// file's content as its entry streams past when it can; otherwise (a file
// met before the symlink that leads to it, a hard link, a file in a layer
// already read) it opens that layer again and reads up to the file.
func (sc *scanner) find(candidates []string) (string, elfInfo, error) {
	for {
		loc, waiting, st, err := sc.decide(candidates)
		if err != nil {
			return "", elfInfo{}, err
		}
		switch st {
		case stateFound:
			info, err := sc.content(loc)
			return loc.path, info, err
		case stateAbsent:
			return "", elfInfo{}, fmt.Errorf("%w: looked for %s", ErrNotFound, sanitize(strings.Join(candidates, ", ")))
		}
		if err := sc.indexNext(candidates, waiting); err != nil {
			return "", elfInfo{}, err
		}
	}
}

// indexNext reads the next layer (or reads again the layer left partial by
// an earlier early stop), indexing it and parsing on the way any regular
// file at a path being waited for; it returns once decide can answer. A
// layer left partial stays indexed as such: what it holds is true, what it
// lacks is unknown to lookup.
func (sc *scanner) indexNext(candidates, waiting []string) error {
	i := len(sc.idx)
	if i > 0 && !sc.idx[i-1].complete {
		i--
		_ = sc.charge(-sc.idx[i].bytes)
	}
	ix := newLayerIndex()
	sc.idx = append(sc.idx[:i], ix)
	decided := false
	err := sc.stream(i, func(h *tar.Header, tr *tar.Reader) (bool, error) {
		before := ix.bytes
		p := ix.add(h)
		if err := sc.charge(ix.bytes - before); err != nil {
			return true, err
		}
		if p == "" {
			return false, nil
		}
		isFile := ix.entries[p].kind == kindFile
		if !relevant(p, waiting) {
			// A file beside a waited-for path (sh -> dash, python3 ->
			// python3.11: a symlink's target often streams before it) is
			// read as it passes, up to maxSpeculative per image, so the
			// layer need not be read again if the symlink leads there.
			if isFile && sc.speculative < maxSpeculative && besideWaiting(p, waiting) {
				sc.speculative++
				return false, sc.parse(i, p, h, tr)
			}
			return false, nil
		}
		loc, w, st, err := sc.decide(candidates)
		if err != nil {
			return true, err
		}
		// The file decided on, or the one a decision waits for, is
		// streaming past: read it now.
		if isFile && st != stateAbsent && loc.path != "" && loc.layer == i && loc.content == p {
			if err := sc.parse(i, p, h, tr); err != nil {
				return true, err
			}
		}
		if st != stateUnknown {
			decided = true
			return true, nil
		}
		waiting = w
		return false, nil
	})
	if err != nil {
		_ = sc.charge(-ix.bytes)
		sc.idx = sc.idx[:i]
		return err
	}
	ix.complete = !decided
	return nil
}

// relevant says whether an entry at p may change a lookup of one of the
// waiting paths: p is one of them, an ancestor of one, or below one (it
// implies its parent directories).
func relevant(p string, waiting []string) bool {
	for _, w := range waiting {
		if w == p || strings.HasPrefix(w, p+"/") || strings.HasPrefix(p, w+"/") {
			return true
		}
	}
	return false
}

// parse reads the ELF records of the file streaming past and keeps the
// outcome; only errors that end the whole scan are returned.
func (sc *scanner) parse(i int, p string, h *tar.Header, tr *tar.Reader) error {
	info, err := sc.readELF(h, tr)
	if err := sc.fatal(err); err != nil {
		return err
	}
	sc.parsed[fileKey{i, p}] = parsed{info, err}
	return nil
}

// readELF reads the ELF records of the file streaming past, within the
// scan's memory budget: a file read whole is held twice at most (its bytes
// and debug/elf's copy of the section names), a streamed one holds its head
// and kept segments. Its bytes are counted as read, the holes of a sparse
// file included, and each read checks the context.
func (sc *scanner) readELF(h *tar.Header, tr *tar.Reader) (elfInfo, error) {
	need := int64(elfHeadBytes) + sc.lim.MaxSection
	if h.Size <= sc.lim.MaxELFInMemory {
		need = 2 * max(h.Size, 0)
	}
	defer func() { _ = sc.charge(-need) }()
	if err := sc.charge(need); err != nil {
		return elfInfo{}, err
	}
	return readELF(&fileReader{r: tr, sc: sc}, h.Size, sc.lim.MaxELFInMemory, sc.lim.MaxSection)
}

// besideWaiting says whether p is in the directory of a waited-for path.
func besideWaiting(p string, waiting []string) bool {
	d := path.Dir(p)
	for _, w := range waiting {
		if path.Dir(w) == d {
			return true
		}
	}
	return false
}

// content returns the ELF records of a located file: parsed on the way, or
// read by streaming its layer again up to its entry.
func (sc *scanner) content(loc located) (elfInfo, error) {
	if p, ok := sc.parsed[fileKey{loc.layer, loc.content}]; ok {
		return p.info, p.err
	}
	var info elfInfo
	found := false
	err := sc.stream(loc.layer, func(h *tar.Header, tr *tar.Reader) (bool, error) {
		if len(h.Name) > maxPathLen || path.Join("/", h.Name) != loc.content {
			return false, nil
		}
		if h.Typeflag != tar.TypeReg { // tar.Reader reports the legacy TypeRegA as TypeReg
			return false, nil
		}
		found = true
		var err error
		info, err = sc.readELF(h, tr)
		return true, err
	})
	if err != nil {
		return elfInfo{}, err
	}
	if !found {
		return elfInfo{}, fmt.Errorf("%w: %s (hard link target missing from its layer)", ErrNotFound, sanitize(loc.content))
	}
	return info, nil
}

// fatal keeps the errors that end the whole scan (limits, time, transport)
// and drops those that only concern one file.
func (sc *scanner) fatal(err error) error {
	if err == nil || errors.Is(err, ErrNotELF) || errors.Is(err, ErrMalformed) {
		return nil
	}
	return err
}
