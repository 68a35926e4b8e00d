package credprov

import (
	"sync"
	"time"
)

// credentialEntryOverhead is the estimated bytes of a cache entry beyond
// its strings.
const credentialEntryOverhead = 128

// namespaceShare is the part of the credential cache one namespace may
// fill: a quarter of its entries and of its bytes (at least one entry).
const namespaceShare = 4

// credentialCache holds plugin answers, and plugin failures for a short
// while, until they expire, bounded by number and estimated bytes in all
// and per namespace (the namespace whose resolution ran the plugin). A
// namespace over its quota evicts its own entries, closest to expiry
// first; when the whole cache is full the namespace holding the most bytes
// gives up its entry closest to expiry. So one namespace asking for many
// distinct hosts cannot evict another's credentials.
type credentialCache struct {
	mu           sync.Mutex
	entries      map[string]credentialCacheEntry
	namespaces   map[string]*namespaceUsage
	bytes        int64
	maxEntries   int
	maxBytes     int64
	nsMaxEntries int
	nsMaxBytes   int64
}

type credentialCacheEntry struct {
	namespace string
	auth      []authEntry
	err       error // a failed run, cached for the failure TTL
	expires   time.Time
	size      int64
}

type namespaceUsage struct {
	entries int
	bytes   int64
}

func newCredentialCache(maxEntries int, maxBytes int64) *credentialCache {
	c := &credentialCache{entries: map[string]credentialCacheEntry{}, namespaces: map[string]*namespaceUsage{}}
	c.setLimits(maxEntries, maxBytes)
	return c
}

// setLimits bounds the cache, and each namespace to its share of it.
func (c *credentialCache) setLimits(maxEntries int, maxBytes int64) {
	c.maxEntries, c.maxBytes = maxEntries, maxBytes
	c.nsMaxEntries, c.nsMaxBytes = max(maxEntries/namespaceShare, 1), max(maxBytes/namespaceShare, 1)
}

// get returns the cached answer under key: the credentials, or the error
// of a failed run.
func (c *credentialCache) get(key string, now time.Time) ([]authEntry, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, nil, false
	}
	if !now.Before(e.expires) {
		c.remove(key)
		return nil, nil, false
	}
	return e.auth, e.err, true
}

// add caches the answer (auth, or err) of a run for namespace.
func (c *credentialCache) add(namespace, key string, auth []authEntry, err error, expires time.Time) {
	size := int64(len(key) + credentialEntryOverhead)
	for _, a := range auth {
		size += int64(len(a.key)+len(a.username)+len(a.password)) + credentialEntryOverhead
	}
	if err != nil {
		size += int64(len(err.Error()))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	if size > c.nsMaxBytes {
		return // larger than a namespace's share: used once, not kept
	}
	u := c.namespaces[namespace]
	for u != nil && (u.entries+1 > c.nsMaxEntries || u.bytes+size > c.nsMaxBytes) {
		c.evictFrom(namespace)
		u = c.namespaces[namespace]
	}
	for len(c.entries) > 0 && (len(c.entries)+1 > c.maxEntries || c.bytes+size > c.maxBytes) {
		c.evictFrom(c.largestNamespace())
	}
	c.entries[key] = credentialCacheEntry{namespace: namespace, auth: auth, err: err, expires: expires, size: size}
	c.bytes += size
	if u = c.namespaces[namespace]; u == nil {
		u = &namespaceUsage{}
		c.namespaces[namespace] = u
	}
	u.entries++
	u.bytes += size
}

// largestNamespace is the namespace whose entries hold the most bytes.
func (c *credentialCache) largestNamespace() string {
	var largest string
	var most int64 = -1
	for ns, u := range c.namespaces {
		if u.bytes > most {
			largest, most = ns, u.bytes
		}
	}
	return largest
}

// evictFrom removes namespace's entry closest to expiry.
func (c *credentialCache) evictFrom(namespace string) {
	var victim string
	var first time.Time
	for k, e := range c.entries {
		if e.namespace == namespace && (victim == "" || e.expires.Before(first)) {
			victim, first = k, e.expires
		}
	}
	c.remove(victim)
}

func (c *credentialCache) remove(key string) {
	e, ok := c.entries[key]
	if !ok {
		return
	}
	c.bytes -= e.size
	delete(c.entries, key)
	if u := c.namespaces[e.namespace]; u != nil {
		u.entries--
		u.bytes -= e.size
		if u.entries == 0 {
			delete(c.namespaces, e.namespace)
		}
	}
}

func (c *credentialCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
