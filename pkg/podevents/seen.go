package podevents

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// uidSet is a set of at most max UIDs: adding one more forgets the oldest
// added.
type uidSet struct {
	mu   sync.Mutex
	max  int
	set  map[types.UID]struct{}
	ring []types.UID // in order of addition; removed UIDs stay until overwritten
	next int         // where the next UID goes once ring is full
}

func newUIDSet(max int) *uidSet {
	return &uidSet{max: max, set: map[types.UID]struct{}{}}
}

// add adds uid and reports whether it was new.
func (s *uidSet) add(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[uid]; ok {
		return false
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, uid)
	} else {
		delete(s.set, s.ring[s.next])
		s.ring[s.next] = uid
		s.next = (s.next + 1) % s.max
	}
	s.set[uid] = struct{}{}
	return true
}

func (s *uidSet) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.set, uid)
}

func (s *uidSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.set)
}
