package budget

import (
	"fmt"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/utils/clock"
)

// Defaults of the budget flags.
const (
	// DefaultMax is one full cycle's worth of evictions
	// (maxEvictionsPerCycle) per namespace per window.
	DefaultMax    = 10
	DefaultWindow = time.Hour
)

// Options are the budget flags.
type Options struct {
	// Max is how many pods of one namespace may be evicted per Window; 0
	// means no limit.
	Max int
	// Window is the sliding window the budget counts over.
	Window time.Duration
}

// DefaultOptions is DefaultMax evictions per DefaultWindow.
func DefaultOptions() Options { return Options{Max: DefaultMax, Window: DefaultWindow} }

// AddFlags adds the budget flags to fs, defaulting to o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Max, "namespace-eviction-budget", o.Max,
		"Most pods of one namespace the rebalancer evicts within --namespace-eviction-window, across cycles and plugins; 0 means no limit.")
	fs.DurationVar(&o.Window, "namespace-eviction-window", o.Window,
		"The sliding window --namespace-eviction-budget counts over.")
}

// Validate rejects a negative budget and a window that is not positive
// while a budget is set.
func (o Options) Validate() error {
	if o.Max < 0 {
		return fmt.Errorf("--namespace-eviction-budget=%d: want 0 (no limit) or more", o.Max)
	}
	if o.Max > 0 && o.Window <= 0 {
		return fmt.Errorf("--namespace-eviction-window=%s: want a positive duration while --namespace-eviction-budget is %d", o.Window, o.Max)
	}
	return nil
}

// Ledger counts evictions per namespace over a sliding window. A nil
// *Ledger allows everything. It is safe for concurrent use.
type Ledger struct {
	max    int
	window time.Duration
	clk    clock.PassiveClock

	mu sync.Mutex
	// evicted holds, per namespace, the times of its evictions within the
	// window, oldest first.
	evicted map[string][]time.Time
}

// New returns a ledger for o; clk nil means the real clock.
func New(o Options, clk clock.PassiveClock) *Ledger {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Ledger{max: o.Max, window: o.Window, clk: clk, evicted: map[string][]time.Time{}}
}

// Allow reports whether another pod of namespace may be evicted now.
func (l *Ledger) Allow(namespace string) bool {
	if l == nil || l.max <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.prune(namespace)) < l.max
}

// Record counts an eviction of a pod of namespace now.
func (l *Ledger) Record(namespace string) {
	if l == nil || l.max <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evicted[namespace] = append(l.prune(namespace), l.clk.Now())
}

// Max is the budget per window (0: no limit).
func (l *Ledger) Max() int {
	if l == nil {
		return 0
	}
	return l.max
}

// prune drops namespace's evictions older than the window and returns
// the rest; l.mu is held.
func (l *Ledger) prune(namespace string) []time.Time {
	ts := l.evicted[namespace]
	cut := l.clk.Now().Add(-l.window)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.evicted, namespace)
		return nil
	}
	l.evicted[namespace] = ts
	return ts
}
