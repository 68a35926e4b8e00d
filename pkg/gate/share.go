package gate

import "sync"

// shares counts the reconciles in progress per namespace, so that one
// namespace's gated pods hold at most a fixed number of the controller's
// workers. It never blocks: a namespace at its share is told so and its
// pod comes back later.
type shares struct {
	mu   sync.Mutex
	max  int
	busy map[string]int
}

func newShares(max int) *shares {
	return &shares{max: max, busy: map[string]int{}}
}

// tryAcquire takes one of ns's places if it has one left; done gives it
// back. A max of 0 or less is no limit.
func (s *shares) tryAcquire(ns string) (done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 0 && s.busy[ns] >= s.max {
		return nil, false
	}
	s.busy[ns]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.busy[ns]--; s.busy[ns] <= 0 {
				delete(s.busy, ns)
			}
		})
	}, true
}
