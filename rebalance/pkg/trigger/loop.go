package trigger

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Loop runs cycles: one at once, then one every Interval (start to
// start, as descheduler's own loop), and one early for a trigger, at most
// one triggered cycle per MinInterval. A cycle is never interrupted by a
// trigger: one that arrives during a cycle waits for its end.
type Loop struct {
	// Interval is the timer; 0 runs one cycle and returns.
	Interval time.Duration
	// MinInterval is the shortest time between the starts of two
	// triggered cycles.
	MinInterval time.Duration
	// Cycle runs one cycle; its error is handed to Done, not fatal.
	Cycle func(ctx context.Context) error
	// Done, if set, is called after each cycle with what started it.
	Done func(r Reason, took time.Duration, err error)
	// Clock is the clock; nil means the real one.
	Clock clock.WithTicker
}

// Run runs cycles until ctx ends (or after the first when Interval is 0).
// triggers carries the reasons for early cycles; send to it without
// blocking (a buffer of one coalesces a burst into one cycle).
func (l *Loop) Run(ctx context.Context, triggers <-chan Reason) {
	clk := l.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var lastTriggered time.Time
	r := Reason{Kind: Start}
	for ctx.Err() == nil {
		// Whatever is pending now is covered by the cycle about to start.
		select {
		case <-triggers:
		default:
		}
		start := clk.Now()
		if r.Kind == NodeJoin || r.Kind == Threshold {
			lastTriggered = start
		}
		err := l.Cycle(ctx)
		if l.Done != nil {
			l.Done(r, clk.Since(start), err)
		}
		if l.Interval <= 0 || ctx.Err() != nil {
			return
		}
		next := start.Add(l.Interval)
		timer := clk.NewTimer(next.Sub(clk.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
			r = Reason{Kind: Timer}
			continue
		case r = <-triggers:
		}
		wait := lastTriggered.Add(l.MinInterval).Sub(clk.Now())
		if lastTriggered.IsZero() || wait <= 0 {
			timer.Stop()
			continue
		}
		// Too soon after the last triggered cycle: wait, unless the timer
		// comes first.
		hold := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			hold.Stop()
			return
		case <-timer.C():
			hold.Stop()
			r = Reason{Kind: Timer}
		case <-hold.C():
			timer.Stop()
		}
	}
}
