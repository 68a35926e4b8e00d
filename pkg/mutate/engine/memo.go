package engine

import (
	"container/list"
	"sync"
)

// rankMemo remembers rankings for one inventory snapshot: pods of one
// workload ask the same thing, and the snapshot changes only when a node's
// ISA does. A new snapshot starts a new memo. It is the package's one memo,
// bounded by entries and by an estimate of the bytes they hold, and evicts
// the least recently used entry past either bound. It is safe for
// concurrent use.
type rankMemo struct {
	snap *Snapshot

	mu    sync.Mutex
	order *list.List               // of *memoEntry, most recently used first
	byKey map[string]*list.Element // rankKey -> element of order
	bytes int64                    // rankingSize of every entry
}

// memoEntry is one ranking of the memo and its key.
type memoEntry struct {
	key string
	r   ranking
}

// Bounds of the ranking memo. An entry holds the group ids of its tiers:
// about 6 KB with 200 groups, so the byte bound is the one that binds in
// large inventories.
const (
	maxRankMemo      = 1024
	maxRankMemoBytes = 1 << 20
)

func newRankMemo(snap *Snapshot) *rankMemo {
	return &rankMemo{snap: snap, order: list.New(), byKey: map[string]*list.Element{}}
}

func (m *rankMemo) get(key []byte) (ranking, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byKey[string(key)]
	if !ok {
		return ranking{}, false
	}
	m.order.MoveToFront(e)
	return e.Value.(*memoEntry).r, true
}

func (m *rankMemo) add(key []byte, r ranking) {
	k := string(key)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byKey[k]; ok {
		m.order.MoveToFront(e) // a concurrent admission computed it too
		return
	}
	m.byKey[k] = m.order.PushFront(&memoEntry{key: k, r: r})
	m.bytes += rankingSize(k, r)
	for m.order.Len() > 0 && (m.order.Len() > maxRankMemo || m.bytes > maxRankMemoBytes) {
		oldest := m.order.Remove(m.order.Back()).(*memoEntry)
		delete(m.byKey, oldest.key)
		m.bytes -= rankingSize(oldest.key, oldest.r)
	}
}

// len is the number of entries the memo holds.
func (m *rankMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

// size is the estimate of the bytes the memo's entries hold.
func (m *rankMemo) size() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

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
