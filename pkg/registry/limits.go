package registry

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
)

// budget is what one registry resolution may consume: response bytes
// (manifests, indexes, configs, token and ping answers) and index entries.
type budget struct {
	maxBytes   int64
	maxEntries int64
	bytes      atomic.Int64
	entries    atomic.Int64
}

// spend counts n more response bytes.
func (b *budget) spend(n int) error {
	if b == nil || n == 0 {
		return nil
	}
	if b.bytes.Add(int64(n)) > b.maxBytes {
		return fmt.Errorf("%w: the registry answers to this image exceed the limit of %d bytes per resolution", errTooLarge, b.maxBytes)
	}
	return nil
}

// fits reports whether n more bytes stay within the budget.
func (b *budget) fits(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if b.bytes.Load()+n > b.maxBytes {
		return fmt.Errorf("%w: a %d-byte answer would exceed the limit of %d bytes per resolution", errTooLarge, n, b.maxBytes)
	}
	return nil
}

// index counts the n entries of one more image index.
func (b *budget) index(n int) error {
	if b == nil {
		return nil
	}
	if total := b.entries.Add(int64(n)); total > b.maxEntries {
		return fmt.Errorf("%w: the image index lists %d entries, the limit is %d per image", errTooLarge, total, b.maxEntries)
	}
	return nil
}

// resolutionKey carries a resolution's namespace and budget to the
// transport in the request context.
type resolutionKey struct{}

type resolution struct {
	namespace string
	budget    *budget
	// layers: the image's layers are streamed ([Resolver.Image]); blob
	// bodies are bounded by the budget alone, read as far as the reader
	// goes.
	layers bool
}

// withResolution returns ctx carrying r, and r's namespace for the
// credential providers (slots.WithNamespace).
func withResolution(ctx context.Context, r *resolution) context.Context {
	return context.WithValue(slots.WithNamespace(ctx, r.namespace), resolutionKey{}, r)
}

func resolutionOf(ctx context.Context) *resolution {
	r, _ := ctx.Value(resolutionKey{}).(*resolution)
	if r == nil {
		return &resolution{}
	}
	return r
}
