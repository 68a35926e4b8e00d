package podevents

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults of the pace of the Events (Options.QPS, Options.Burst).
//
// The Events are the leader's only writes per admitted pod. Written as
// fast as pods arrive they double the writes a burst of pods makes to the
// API server and etcd, and slow the admissions that follow: on a 2-core
// control plane at 100 pods a second, isamatch added 4.9 ms to the median
// admission over a no-op webhook with its Events at 50 a second, and under
// 1 ms with them paced at these defaults (docs/benchmarks.md). Paced, they
// cost the same in total, after the burst instead of during it.
const (
	DefaultQPS   = 10
	DefaultBurst = 50
	// QueueLen bounds the Events waiting for their turn, about 1 kB each.
	// Past it the oldest waiting is dropped and counted; client-go's own
	// recorder drops past 1,000 queued, uncounted.
	QueueLen = 4096
)

// Pacer is an EventRecorder that records through another at a bounded
// rate, newest first, from a bounded queue: after a burst of pods, the
// Events of the pods created last, which someone is most likely looking
// at, come first. Its Eventf never blocks. It is safe for concurrent use.
type Pacer struct {
	rec     EventRecorder
	lim     *rate.Limiter
	metrics *Metrics
	wake    chan struct{}

	mu sync.Mutex
	// q is a ring of len(q) Events: n of them from head, oldest first.
	q       []queued
	head, n int
}

// queued is an Event waiting, its note formatted.
type queued struct {
	regarding, related              runtime.Object
	eventtype, reason, action, note string
}

// NewPacer returns a Pacer that records through rec at most qps Events a
// second, burst at once, holding at most queueLen waiting. m may be nil.
// It records nothing until Run.
func NewPacer(rec EventRecorder, qps float64, burst, queueLen int, m *Metrics) (*Pacer, error) {
	if !(qps > 0) || burst < 1 || queueLen < 1 {
		return nil, fmt.Errorf("pace Events: want qps > 0, burst >= 1 and queue length >= 1, got %v, %d and %d", qps, burst, queueLen)
	}
	return &Pacer{rec: rec, lim: rate.NewLimiter(rate.Limit(qps), burst), metrics: m, wake: make(chan struct{}, 1), q: make([]queued, queueLen)}, nil
}

// Eventf queues the Event, its note formatted now. When the queue is full
// the oldest waiting Event is dropped.
func (p *Pacer) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e := queued{regarding: regarding, related: related, eventtype: eventtype, reason: reason, action: action, note: fmt.Sprintf(note, args...)}
	p.mu.Lock()
	if p.n == len(p.q) {
		p.q[p.head] = queued{}
		p.head = (p.head + 1) % len(p.q)
		p.n--
		p.metrics.dropped()
	}
	p.q[(p.head+p.n)%len(p.q)] = e
	p.n++
	p.metrics.setQueued(p.n)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// pop takes the newest Event waiting.
func (p *Pacer) pop() (queued, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return queued{}, false
	}
	i := (p.head + p.n - 1) % len(p.q)
	e := p.q[i]
	p.q[i] = queued{}
	p.n--
	p.metrics.setQueued(p.n)
	return e, true
}

// Len is how many Events wait.
func (p *Pacer) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Run records the Events as the rate allows until ctx ends. Those still
// waiting then are not recorded: a leader that stops leaves them to the
// next, which reports the pods still unscheduled again.
func (p *Pacer) Run(ctx context.Context) {
	for {
		if p.Len() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
			continue
		}
		// Wait first, then take the newest: what arrived during the wait
		// goes before what was there.
		if err := p.lim.Wait(ctx); err != nil {
			return
		}
		if e, ok := p.pop(); ok {
			p.rec.Eventf(e.regarding, e.related, e.eventtype, e.reason, e.action, "%s", e.note)
		}
	}
}
