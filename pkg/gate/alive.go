package gate

import (
	"context"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaseWatch says whether a gate controller is alive: whether the Lease its
// replicas elect a leader with is held and was renewed within its duration.
// Admission gates a pod only while one is (mutate.Options.GateAlive): a pod
// gated with no controller to release it would wait for ever, as it did
// when leader election failed (a missing namespace, broken RBAC) or every
// replica of the controller was down.
//
// It reads the Lease every Interval; until the first read succeeds, and
// whenever one fails, no controller counts as alive. Start it on every
// replica: admission runs on all of them, the controller on one.
type LeaseWatch struct {
	// Reader reads the Lease (an uncached reader: one object, read every
	// Interval).
	Reader client.Reader
	// Key names the Lease.
	Key client.ObjectKey
	// Interval is how often the Lease is read; zero means 2s.
	Interval time.Duration
	// Metrics, when set, gets Alive (set before Start).
	Metrics *Metrics

	alive atomic.Bool
	// now is time.Now; tests replace it.
	now func() time.Time
}

// Alive reports whether the last read found the Lease held and fresh.
func (w *LeaseWatch) Alive() bool { return w.alive.Load() }

// Start reads the Lease every Interval until ctx ends. It implements
// manager.Runnable.
func (w *LeaseWatch) Start(ctx context.Context) error {
	interval := w.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	if w.now == nil {
		w.now = time.Now
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var l coordinationv1.Lease
		err := w.Reader.Get(ctx, w.Key, &l)
		w.set(err == nil && LeaseHeld(&l, w.now()))
		select {
		case <-ctx.Done():
			w.set(false)
			return nil
		case <-t.C:
		}
	}
}

func (w *LeaseWatch) set(alive bool) {
	w.alive.Store(alive)
	if w.Metrics != nil {
		v := 0.0
		if alive {
			v = 1
		}
		w.Metrics.Alive.Set(v)
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica watches.
func (w *LeaseWatch) NeedLeaderElection() bool { return false }

// LeaseHeld reports whether l has a holder whose last renewal is within the
// lease's duration at now.
func LeaseHeld(l *coordinationv1.Lease, now time.Time) bool {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}
