package registry

import (
	"sync"
	"time"

	"k8s.io/utils/lru"
)

// cacheEntry is a cached resolution: its platforms or its error (kind and
// sanitised message only) and when it expires.
type cacheEntry struct {
	platforms []Platform
	err       *Error
	expires   time.Time
	// slotWait marks a failure while waiting for a slot: never cached.
	slotWait bool
}

// cacheEntryOverhead approximates the memory of an entry besides its
// strings: the LRU element, map slot, slice headers, time.
const cacheEntryOverhead = 160

// platformOverhead approximates a Platform besides its strings.
const platformOverhead = 4*16 + 8

// size estimates the memory key and e hold.
func (e cacheEntry) size(key string) int64 {
	n := int64(cacheEntryOverhead + len(key))
	for _, p := range e.platforms {
		n += int64(platformOverhead + len(p.OS) + len(p.Architecture) + len(p.Variant) + len(p.ISARequest) + len(p.Digest))
	}
	if e.err != nil {
		n += int64(64 + len(e.err.Ref) + len(e.err.Kind) + len(e.err.Err.Error()))
	}
	return n
}

// byteCache is an LRU (k8s.io/utils/lru) bounded by the estimated bytes of
// its entries and by their number, whose entries also expire: an entry
// past its expiry is dropped when looked up, and the least recently used
// ones are evicted while the cache is over either bound.
type byteCache struct {
	maxBytes int64
	now      func() time.Time

	mu    sync.Mutex // also guards bytes, changed by the eviction hook
	lru   *lru.Cache
	bytes int64
}

func newByteCache(maxBytes int64, maxEntries int, now func() time.Time) *byteCache {
	c := &byteCache{maxBytes: maxBytes, now: now}
	c.lru = lru.NewWithEvictionFunc(max(maxEntries, 1), func(k lru.Key, v any) {
		c.bytes -= v.(cacheEntry).size(k.(string))
	})
	return c
}

// get returns key's live entry.
func (c *byteCache) get(key string) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.lru.Get(key)
	if !ok {
		return cacheEntry{}, false
	}
	e := v.(cacheEntry)
	if !c.now().Before(e.expires) {
		c.lru.Remove(key)
		return cacheEntry{}, false
	}
	return e, true
}

// add stores e under key, then evicts the least recently used entries
// while over the byte bound (an entry larger than the bound is not kept).
func (c *byteCache) add(key string, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(key) // a replaced value is not reported as evicted
	c.lru.Add(key, e)
	c.bytes += e.size(key)
	for c.bytes > c.maxBytes && c.lru.Len() > 0 {
		c.lru.RemoveOldest()
	}
}

// stats returns the entries and estimated bytes held.
func (c *byteCache) stats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
