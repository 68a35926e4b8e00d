package trigger

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestLoop drives Loop with a fake clock: the start cycle, a triggered
// cycle at once, a second trigger held until MinInterval has passed since
// the first, a burst coalesced into one cycle, and the timer.
func TestLoop(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	cycles := make(chan Reason)
	triggers := make(chan Reason, 1)
	l := &Loop{
		Interval: 10 * time.Minute, MinInterval: 30 * time.Second, Clock: clk,
		Cycle: func(context.Context) error { return nil },
		Done:  func(r Reason, _ time.Duration, _ error) { cycles <- r },
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx, triggers) }()
	defer func() { cancel(); <-done }()

	next := func(what string) Reason {
		t.Helper()
		select {
		case r := <-cycles:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no cycle", what)
			return Reason{}
		}
	}
	// waiters blocks until the loop waits on n timers.
	waiters := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for clk.Waiters() != n {
			if time.Now().After(deadline) {
				t.Fatalf("the loop waits on %d timers, want %d", clk.Waiters(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var got []Reason
	got = append(got, next("start"))
	waiters(1) // the timer
	join := Reason{Kind: NodeJoin, Node: "a"}
	triggers <- join
	got = append(got, next("first trigger")) // at once: no triggered cycle yet

	waiters(1)
	clk.Step(10 * time.Second)
	triggers <- Reason{Kind: Threshold, Node: "b"}
	waiters(2) // the timer and the hold until 30s after the first trigger
	select {
	case r := <-cycles:
		t.Fatalf("a triggered cycle %+v ran 10s after the last, want none before 30s", r)
	default:
	}
	triggers <- Reason{Kind: NodeJoin, Node: "c"} // coalesced: still pending when the held cycle starts
	clk.Step(20 * time.Second)
	got = append(got, next("held trigger"))

	waiters(1) // the burst's pending trigger was drained at cycle start
	clk.Step(10 * time.Minute)
	got = append(got, next("timer"))

	want := []Reason{{Kind: Start}, join, {Kind: Threshold, Node: "b"}, {Kind: Timer}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cycles (-want +got):\n%s", diff)
	}
}

// TestLoopOnce: Interval 0 runs one cycle and returns.
func TestLoopOnce(t *testing.T) {
	n := 0
	l := &Loop{Cycle: func(context.Context) error { n++; return nil }}
	l.Run(t.Context(), make(chan Reason, 1))
	if n != 1 {
		t.Errorf("ran %d cycles, want 1", n)
	}
}
