package imageisa

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
)

// stream opens layer i and calls fn for each tar entry until fn says stop,
// the stream ends, or a limit is reached. With verify, a stream that ends
// well is then read to its end (see drain).
func (sc *scanner) stream(i int, fn func(*tar.Header, *tar.Reader) (bool, error)) error {
	if err := sc.ctx.Err(); err != nil {
		return sc.ctxErr()
	}
	rc, err := sc.layers[i].Uncompressed()
	if err != nil {
		if sc.ctx.Err() != nil {
			return sc.ctxErr()
		}
		return fmt.Errorf("open layer %d from the top: %w", i, err)
	}
	sc.work.Layers++
	// A read blocked on the network ends when the deadline closes it.
	stop := context.AfterFunc(sc.ctx, func() { rc.Close() })
	defer stop()
	defer rc.Close()
	cr := &countingReader{r: rc, sc: sc}
	tr := tar.NewReader(cr)
	for {
		if sc.ctx.Err() != nil {
			return sc.ctxErr()
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return sc.drain(i, rc)
		}
		if err != nil {
			return sc.readErr(i, cr, err)
		}
		sc.work.Entries++
		if sc.work.Entries > sc.lim.MaxEntries {
			return fmt.Errorf("%w: more than %d tar entries", ErrLimit, sc.lim.MaxEntries)
		}
		stop, err := fn(h, tr)
		if err != nil {
			return sc.readErr(i, cr, err)
		}
		if stop {
			return sc.drain(i, rc)
		}
	}
}

// drain reads what is left of a layer stream, so that the layer's reader
// reaches its end and checks the bytes against the layer's digest
// (go-containerregistry checks it there and only there). A mismatch fails
// the scan: nothing learnt from those bytes is kept. Draining has its own
// budget of MaxBytes, so it never starves the scan's reads; when that
// budget or the time limit runs out first, the layer counts as unverified
// (Work.Unverified) and the result stands.
func (sc *scanner) drain(i int, rc io.Reader) error {
	if !sc.verify {
		return nil
	}
	buf := make([]byte, 32<<10)
	for {
		if sc.ctx.Err() != nil || sc.work.Drained >= sc.lim.MaxBytes {
			sc.work.Unverified++
			return nil
		}
		n, err := rc.Read(buf[:min(int64(len(buf)), sc.lim.MaxBytes-sc.work.Drained)])
		sc.work.Drained += int64(n)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && sc.ctx.Err() != nil:
			sc.work.Unverified++
			return nil
		case err != nil:
			return fmt.Errorf("verify layer %d from the top: %w", i, err)
		}
	}
}

// fileReader hands a file's content to the ELF reader: it counts the bytes
// as archive/tar gives them (the holes of a sparse file, which it makes up
// without reading, included) against MaxBytes, and stops at the context's
// end, so a file's logical size costs neither unbounded CPU nor time.
type fileReader struct {
	r  io.Reader
	sc *scanner
}

func (f *fileReader) Read(p []byte) (int, error) {
	sc := f.sc
	if sc.ctx.Err() != nil {
		return 0, sc.ctxErr()
	}
	left := sc.lim.MaxBytes - sc.work.FileBytes
	if left <= 0 {
		return 0, fmt.Errorf("%w: file content of %d bytes read, limit %d", ErrLimit, sc.work.FileBytes, sc.lim.MaxBytes)
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := f.r.Read(p)
	sc.work.FileBytes += int64(n)
	return n, err
}

func (sc *scanner) readErr(i int, cr *countingReader, err error) error {
	switch {
	case cr.err != nil:
		return cr.err
	case sc.ctx.Err() != nil:
		return sc.ctxErr()
	case errors.Is(err, ErrNotELF), errors.Is(err, ErrMalformed), errors.Is(err, ErrLimit):
		return err
	}
	return fmt.Errorf("read layer %d from the top: %w", i, err)
}

func (sc *scanner) ctxErr() error {
	if errors.Is(context.Cause(sc.ctx), errTimeout) {
		return fmt.Errorf("%w: %w of %s", ErrLimit, errTimeout, sc.lim.Timeout)
	}
	return sc.ctx.Err()
}

// countingReader counts uncompressed bytes against MaxBytes.
type countingReader struct {
	r   io.Reader
	sc  *scanner
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	left := c.sc.lim.MaxBytes - c.sc.work.Bytes
	if left <= 0 {
		c.err = fmt.Errorf("%w: read %d uncompressed layer bytes, limit %d", ErrLimit, c.sc.work.Bytes, c.sc.lim.MaxBytes)
		return 0, c.err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.sc.work.Bytes += int64(n)
	return n, err
}
