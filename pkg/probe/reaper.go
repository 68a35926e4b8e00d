package probe

import "sync"

// Reaper reaps zombie processes for a labeler that is PID 1 of its
// container: a compiler's orphaned children are reparented to PID 1, and
// nothing else would ever wait for them. Start it with [Reaper.Run] only
// when os.Getpid() == 1, and give it to the [ExecRunner]s (their Reaper
// field): while a command runs the reaper waits, so it never takes the exit
// status os/exec is waiting for.
type Reaper struct {
	mu sync.RWMutex
}

// NewReaper returns a reaper; it reaps nothing until Run.
func NewReaper() *Reaper { return &Reaper{} }
