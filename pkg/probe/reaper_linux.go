package probe

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Run reaps exited children on every SIGCHLD, and once at start, until ctx
// ends.
func (r *Reaper) Run(ctx context.Context) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	for {
		r.reap()
		select {
		case <-ctx.Done():
			return
		case <-sig:
		}
	}
}

// reap waits for every exited child without blocking and returns how many
// it reaped.
func (r *Reaper) reap() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return n
		}
		n++
	}
}
