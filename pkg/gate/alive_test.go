package gate

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestLeaseHeld(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(holder string, renewedAgo time.Duration, duration int32) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &duration}}
		if holder != "" {
			l.Spec.HolderIdentity = &holder
		}
		l.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-renewedAgo)}
		return l
	}
	for _, tc := range []struct {
		name string
		l    *coordinationv1.Lease
		want bool
	}{
		{"renewed within its duration", lease("replica-a", 5*time.Second, 15), true},
		{"renewal overdue: the leader died", lease("replica-a", 16*time.Second, 15), false},
		{"released on shutdown", lease("", time.Second, 15), false},
		{"never renewed", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeaseHeld(tc.l, now); got != tc.want {
				t.Errorf("LeaseHeld = %t, want %t", got, tc.want)
			}
		})
	}
}

// A fake client is enough here: the watch only reads one object.
func TestLeaseWatch(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "isamatch-system", Name: "isamatch-webhook"}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	w := &LeaseWatch{Reader: c, Key: key, Interval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Start(ctx) }()
	waitFor := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for w.Alive() != want {
			if time.Now().After(deadline) {
				t.Fatalf("Alive() stayed %t: %s", !want, what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(false, "no Lease: nothing releases gated pods")
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To("replica-a"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: time.Now()},
	}}
	if err := c.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	waitFor(true, "a held, fresh Lease")
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-time.Minute)}
	if err := c.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	waitFor(false, "the holder stopped renewing")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
