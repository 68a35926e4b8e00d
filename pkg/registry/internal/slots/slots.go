package slots

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// ErrWait marks a wait for a slot that ended (its context did) before a
// slot was free: whoever waited never got to ask the registry or run the
// plugin, so the failure says nothing about them and is not cached.
var ErrWait = errors.New("no registry slot free")

// Keyed hands out up to size slots per key (a registry host, a
// namespace). A key's semaphore exists only while someone holds or waits
// for one of its slots, so the map stays as small as the work in flight.
type Keyed struct {
	size int64
	what string // "registry host", "namespace": for the error text

	mu   sync.Mutex
	sems map[string]*keyedSem
}

type keyedSem struct {
	sem   *semaphore.Weighted
	users int
}

// NewKeyed returns size slots per key; what names a key in errors.
func NewKeyed(size int, what string) *Keyed {
	return &Keyed{size: int64(max(size, 1)), what: what, sems: map[string]*keyedSem{}}
}

// Acquire waits for one of key's slots until ctx ends; the error then
// wraps ErrWait.
func (k *Keyed) Acquire(ctx context.Context, key string) (release func(), err error) {
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
		return nil, fmt.Errorf("%w for %s %q (%d in use): %w", ErrWait, k.what, key, k.size, err)
	}
	return func() { s.sem.Release(1); done() }, nil
}

// Pool is a global pool of slots.
type Pool struct {
	sem  *semaphore.Weighted
	size int
	what string
}

// NewPool returns a pool of size slots; what names them in errors.
func NewPool(size int, what string) *Pool {
	size = max(size, 1)
	return &Pool{sem: semaphore.NewWeighted(int64(size)), size: size, what: what}
}

// Acquire waits for a slot until ctx ends; the error then wraps ErrWait.
func (s *Pool) Acquire(ctx context.Context) (release func(), err error) {
	if err := s.sem.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("%w among the %d %s: %w", ErrWait, s.size, s.what, err)
	}
	return func() { s.sem.Release(1) }, nil
}

// AcquireAll takes a slot of each pool in order and returns one release
// for all of them; on failure it releases what it took. Every caller takes
// the pools in the same order, so waits never form a cycle.
func AcquireAll(ctx context.Context, steps ...func(context.Context) (func(), error)) (func(), error) {
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

// namespaceKey carries the namespace whose work holds slots.
type namespaceKey struct{}

// WithNamespace returns ctx carrying the namespace whose pod the work done
// under it is for: the resolver sets it, the credential providers charge
// their per-namespace slots and cache quota to it.
func WithNamespace(ctx context.Context, namespace string) context.Context {
	return context.WithValue(ctx, namespaceKey{}, namespace)
}

// Namespace is the namespace WithNamespace put in ctx ("" when none).
func Namespace(ctx context.Context) string {
	ns, _ := ctx.Value(namespaceKey{}).(string)
	return ns
}
