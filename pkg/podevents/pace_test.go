package podevents

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
)

// queue puts n Events on pods p0..p(n-1), in that order, into p.
func queue(p *Pacer, from, to int) {
	for k := from; k < to; k++ {
		p.Eventf(&corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: fmt.Sprintf("p%d", k), UID: "u"}, nil, corev1.EventTypeNormal, ReasonDecided, action, "note %d", k)
	}
}

// TestPacerQueue: the newest Event goes first, and past the queue's length
// the oldest are dropped and counted.
func TestPacerQueue(t *testing.T) {
	rec := &fakeRecorder{}
	m := NewMetrics()
	p, err := NewPacer(rec, 1000, 1000, 3, m)
	if err != nil {
		t.Fatal(err)
	}
	queue(p, 0, 5)
	if got := testutil.ToFloat64(m.Dropped); got != 2 {
		t.Errorf("dropped %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.Queued); got != 3 {
		t.Errorf("queued %v, want 3", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	deadline := time.Now().Add(time.Minute)
	for p.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	var got []string
	for _, e := range rec.take() {
		got = append(got, e.Note)
	}
	if diff := cmp.Diff([]string{"note 4", "note 3", "note 2"}, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	if got := testutil.ToFloat64(m.Queued); got != 0 {
		t.Errorf("queued %v after the run, want 0", got)
	}
}

// TestPacerRate: past its burst the Pacer records no faster than its
// rate: at 1 a second with a burst of 3, at most 3 + 1 per second since it
// was made (plus one for the token being refilled).
func TestPacerRate(t *testing.T) {
	rec := &fakeRecorder{}
	start := time.Now()
	p, err := NewPacer(rec, 1, 3, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	queue(p, 0, 10)
	go p.Run(t.Context())
	n := 0
	deadline := time.Now().Add(time.Minute)
	for n < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n += len(rec.take())
	}
	if n < 3 {
		t.Fatalf("recorded %d of the burst of 3 in a minute", n)
	}
	time.Sleep(500 * time.Millisecond)
	n += len(rec.take())
	elapsed := time.Since(start)
	if most := 3 + int(elapsed.Seconds()) + 1; n > most {
		t.Errorf("recorded %d Events in %s at 1 a second after a burst of 3, want at most %d", n, elapsed, most)
	}
}

func TestNewPacerRejects(t *testing.T) {
	for _, c := range []struct {
		qps          float64
		burst, queue int
	}{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}} {
		if _, err := NewPacer(&fakeRecorder{}, c.qps, c.burst, c.queue, nil); err == nil {
			t.Errorf("NewPacer(%v, %d, %d) accepted", c.qps, c.burst, c.queue)
		}
	}
}
