package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDrainingContext: after the first signal the replica is draining but
// keeps serving; the context ends after the delay, or at a second signal.
func TestDrainingContext(t *testing.T) {
	signals := make(chan os.Signal, 2)
	ctx, draining := drainingContext(time.Hour, signals)
	select {
	case <-draining:
		t.Fatal("draining before any signal")
	default:
	}
	signals <- syscall.SIGTERM
	select {
	case <-draining:
	case <-time.After(10 * time.Second):
		t.Fatal("not draining 10 s after SIGTERM")
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("context ended at SIGTERM (%v): the replica would stop serving before its endpoint is gone", err)
	}
	signals <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not end the context")
	}

	ctx, _ = drainingContext(10*time.Millisecond, signals)
	signals <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end after the delay")
	}
}
