package imageisa

import (
	"container/list"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Key names what an outcome was learnt from: an image digest as served by
// one repository. Outcomes are not shared between repositories: a
// repository may serve a manifest it copied from another, byte for byte,
// with other bytes for its layers, and a scan that stops at the program
// has not checked those bytes against their digest. Repo is "" for images
// the caller hands in itself ([Inferrer.Infer]).
type Key struct {
	// Repo is the registry and repository, "registry.example/team/app".
	Repo   string
	Digest v1.Hash
}

func (k Key) String() string { return k.Repo + "@" + k.Digest.String() }

// Cache remembers Infer outcomes by [Key]. An image digest names its
// config and layers, so an outcome never goes stale: entries leave only when
// the cache is over its byte budget (least recently used first). Outcomes
// that depend on the moment (a time limit, a transport error, a cancelled
// context) are not stored.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	ll      *list.List // front: most recently used
	entries map[Key]*list.Element
}

type cacheEntry struct {
	key  Key
	res  Result
	err  error
	size int64
}

// NewCache returns a cache holding at most maxBytes of results (estimated:
// the strings they hold plus a fixed overhead per entry).
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, ll: list.New(), entries: map[Key]*list.Element{}}
}

// entryOverhead approximates an entry's fixed cost: the list element, the
// map slot, the Result and its isa.ISA.
const entryOverhead = 512

func entrySize(k Key, r Result, err error) int64 {
	n := int64(entryOverhead + len(k.Repo) + len(k.Digest.Algorithm) + len(k.Digest.Hex) + len(r.Entrypoint) + len(r.Path) + len(r.Raw) + len(r.From) + len(r.Note))
	if r.ISA != nil {
		for _, u := range r.ISA.Unknown {
			n += int64(len(u)) + 16
		}
	}
	if err != nil {
		n += int64(len(err.Error()))
	}
	return n
}

// Get returns the stored outcome for k.
func (c *Cache) Get(k Key) (Result, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if !ok {
		return Result{}, nil, false
	}
	c.ll.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	return e.res, e.err, true
}

// Add stores an outcome, evicting the least recently used entries to stay
// within the byte budget. An entry larger than the whole budget is not
// stored.
func (c *Cache) Add(k Key, r Result, err error) {
	sz := entrySize(k, r, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if sz > c.max {
		return
	}
	if el, ok := c.entries[k]; ok {
		c.size -= el.Value.(*cacheEntry).size
		c.ll.Remove(el)
		delete(c.entries, k)
	}
	c.entries[k] = c.ll.PushFront(&cacheEntry{key: k, res: r, err: err, size: sz})
	c.size += sz
	for c.size > c.max {
		el := c.ll.Back()
		e := el.Value.(*cacheEntry)
		c.ll.Remove(el)
		delete(c.entries, e.key)
		c.size -= e.size
	}
}

// Len returns the number of entries and their estimated bytes.
func (c *Cache) Len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}
