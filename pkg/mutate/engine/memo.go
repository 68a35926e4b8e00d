package engine

import (
	"sync"
	"sync/atomic"

	"k8s.io/utils/lru"
)

// rankMemo remembers rankings for one inventory snapshot: pods of one
// workload ask the same thing, and the snapshot changes only when a node's
// ISA does. A new snapshot starts a new memo. It is the package's one memo,
// bounded by entries and by an estimate of the bytes they hold, and evicts
// the least recently used entry past either bound. It is safe for
// concurrent use.
type rankMemo struct {
	snap  *Snapshot
	cache *lru.Cache // rankKey -> ranking
	addMu sync.Mutex // serialises add, so an entry is counted once
	bytes atomic.Int64
}

// Bounds of the ranking memo. An entry holds the group ids of its tiers:
// about 6 KB with 200 groups, so the byte bound is the one that binds in
// large inventories.
const (
	maxRankMemo      = 1024
	maxRankMemoBytes = 1 << 20
)

func newRankMemo(snap *Snapshot) *rankMemo {
	m := &rankMemo{snap: snap}
	m.cache = lru.NewWithEvictionFunc(maxRankMemo, func(key lru.Key, value any) {
		m.bytes.Add(-rankingSize(key.(string), value.(ranking)))
	})
	return m
}

func (m *rankMemo) get(key []byte) (ranking, bool) {
	v, ok := m.cache.Get(string(key))
	if !ok {
		return ranking{}, false
	}
	return v.(ranking), true
}

func (m *rankMemo) add(key []byte, r ranking) {
	k := string(key)
	m.addMu.Lock()
	defer m.addMu.Unlock()
	if _, ok := m.cache.Get(k); ok {
		return // a concurrent admission computed it too
	}
	m.bytes.Add(rankingSize(k, r))
	m.cache.Add(k, r)
	for m.bytes.Load() > maxRankMemoBytes && m.cache.Len() > 0 {
		m.cache.RemoveOldest()
	}
}

// len is the number of entries the memo holds.
func (m *rankMemo) len() int { return m.cache.Len() }

// size is the estimate of the bytes the memo's entries hold.
func (m *rankMemo) size() int64 { return m.bytes.Load() }

// rankingSize estimates the bytes an entry holds: its key, its summary
// text, and its preferred terms with their values.
func rankingSize(key string, r ranking) int64 {
	const overhead = 128 // entry, list element, slice and struct headers
	n := overhead + len(key) + len(r.tiers)
	for _, p := range r.preferred {
		n += 64
		for _, e := range p.Preference.MatchExpressions {
			n += 64 + len(e.Key) + len(e.Operator)
			for _, v := range e.Values {
				n += 16 + len(v)
			}
		}
	}
	return int64(n)
}
