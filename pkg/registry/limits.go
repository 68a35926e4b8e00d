package registry

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// keyedSlots hands out up to size slots per key (a registry host, a
// namespace). A key's semaphore exists only while someone holds or waits
// for one of its slots, so the map stays as small as the work in flight.
type keyedSlots struct {
	size int64
	what string // "registry host", "namespace": for the error text

	mu   sync.Mutex
	sems map[string]*keyedSem
}

type keyedSem struct {
	sem   *semaphore.Weighted
	users int
}

func newKeyedSlots(size int, what string) *keyedSlots {
	return &keyedSlots{size: int64(max(size, 1)), what: what, sems: map[string]*keyedSem{}}
}

// acquire waits for one of key's slots until ctx ends; the error then wraps
// errSlotWait.
func (k *keyedSlots) acquire(ctx context.Context, key string) (release func(), err error) {
	k.mu.Lock()
	s := k.sems[key]
	if s == nil {
		s = &keyedSem{sem: semaphore.NewWeighted(k.size)}
		k.sems[key] = s
	}
	s.users++
	k.mu.Unlock()
	done := func() {
		k.mu.Lock()
		if s.users--; s.users == 0 {
			delete(k.sems, key)
		}
		k.mu.Unlock()
	}
	if err := s.sem.Acquire(ctx, 1); err != nil {
		done()
		return nil, fmt.Errorf("%w for %s %q (%d in use): %w", errSlotWait, k.what, key, k.size, err)
	}
	return func() { s.sem.Release(1); done() }, nil
}

// slots is a global pool of slots.
type slots struct {
	sem  *semaphore.Weighted
	size int
	what string
}

func newSlots(size int, what string) *slots {
	size = max(size, 1)
	return &slots{sem: semaphore.NewWeighted(int64(size)), size: size, what: what}
}

func (s *slots) acquire(ctx context.Context) (release func(), err error) {
	if err := s.sem.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("%w among the %d %s: %w", errSlotWait, s.size, s.what, err)
	}
	return func() { s.sem.Release(1) }, nil
}

// acquireAll takes a slot of each pool in order and returns one release
// for all of them; on failure it releases what it took. Every caller takes
// the pools in the same order, so waits never form a cycle.
func acquireAll(ctx context.Context, steps ...func(context.Context) (func(), error)) (func(), error) {
	var held []func()
	releaseAll := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	for _, step := range steps {
		rel, err := step(ctx)
		if err != nil {
			releaseAll()
			return nil, err
		}
		held = append(held, rel)
	}
	var once sync.Once
	return func() { once.Do(releaseAll) }, nil
}

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

func withResolution(ctx context.Context, r *resolution) context.Context {
	return context.WithValue(ctx, resolutionKey{}, r)
}

func resolutionOf(ctx context.Context) *resolution {
	r, _ := ctx.Value(resolutionKey{}).(*resolution)
	if r == nil {
		return &resolution{}
	}
	return r
}
