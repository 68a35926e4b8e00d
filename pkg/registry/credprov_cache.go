package registry

import (
	"sync"
	"time"
)

// credentialEntryOverhead is the estimated bytes of a cache entry beyond
// its strings.
const credentialEntryOverhead = 128

// credentialCache holds plugin answers until they expire, bounded by
// number and estimated bytes; when full, expired entries go first, then
// those closest to expiry.
type credentialCache struct {
	mu         sync.Mutex
	entries    map[string]credentialCacheEntry
	bytes      int64
	maxEntries int
	maxBytes   int64
}

type credentialCacheEntry struct {
	auth    []authEntry
	expires time.Time
	size    int64
}

func newCredentialCache(maxEntries int, maxBytes int64) *credentialCache {
	return &credentialCache{entries: map[string]credentialCacheEntry{}, maxEntries: maxEntries, maxBytes: maxBytes}
}

func (c *credentialCache) get(key string, now time.Time) ([]authEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	if !now.Before(e.expires) {
		c.remove(key)
		return nil, false
	}
	return e.auth, true
}

func (c *credentialCache) add(key string, auth []authEntry, expires time.Time) {
	size := int64(len(key) + credentialEntryOverhead)
	for _, a := range auth {
		size += int64(len(a.key)+len(a.username)+len(a.password)) + credentialEntryOverhead
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	if size > c.maxBytes {
		return // larger than the whole cache: used once, not kept
	}
	if len(c.entries) >= c.maxEntries || c.bytes+size > c.maxBytes {
		c.evict(len(c.entries)+1-c.maxEntries, c.bytes+size-c.maxBytes)
	}
	c.entries[key] = credentialCacheEntry{auth: auth, expires: expires, size: size}
	c.bytes += size
}

// evict removes at least n entries and b bytes, soonest to expire first.
func (c *credentialCache) evict(n int, b int64) {
	for n > 0 || b > 0 {
		var victim string
		var first time.Time
		for k, e := range c.entries {
			if victim == "" || e.expires.Before(first) {
				victim, first = k, e.expires
			}
		}
		if victim == "" {
			return
		}
		b -= c.entries[victim].size
		n--
		c.remove(victim)
	}
}

func (c *credentialCache) remove(key string) {
	if e, ok := c.entries[key]; ok {
		c.bytes -= e.size
		delete(c.entries, key)
	}
}

func (c *credentialCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
