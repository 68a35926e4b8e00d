package budget

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestLedger(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	l := New(Options{Max: 2, Window: time.Hour}, clk)
	type step struct {
		after  time.Duration
		ns     string
		record bool
		want   bool // Allow before the record
	}
	steps := []step{
		{ns: "victim", record: true, want: true},
		{after: time.Minute, ns: "victim", record: true, want: true},
		{after: time.Minute, ns: "victim", want: false},     // spent
		{ns: "other", record: true, want: true},             // another namespace has its own
		{after: 58 * time.Minute, ns: "victim", want: true}, // the first left the window
	}
	var want, got []bool
	for _, s := range steps {
		clk.SetTime(clk.Now().Add(s.after))
		want, got = append(want, s.want), append(got, l.Allow(s.ns))
		if s.record {
			l.Record(s.ns)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Allow per step (-want +got):\n%s", diff)
	}
	clk.SetTime(clk.Now().Add(2 * time.Hour))
	l.Allow("victim")
	l.Allow("other")
	if len(l.evicted) != 0 {
		t.Errorf("namespaces kept after their window: %v", l.evicted)
	}
}

func TestLedgerUnlimited(t *testing.T) {
	var nilLedger *Ledger
	l := New(Options{}, nil)
	for range 100 {
		l.Record("ns")
		nilLedger.Record("ns")
	}
	if !l.Allow("ns") || !nilLedger.Allow("ns") {
		t.Error("a ledger without a budget refused an eviction")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"defaults", DefaultOptions(), true},
		{"no limit", Options{}, true},
		{"negative", Options{Max: -1, Window: time.Hour}, false},
		{"no window", Options{Max: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate(%+v) = %v, want ok %t", tc.o, err, tc.ok)
			}
		})
	}
}
