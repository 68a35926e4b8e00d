//go:build !linux

package probe

import "context"

// Run returns when ctx ends: outside Linux the labeler never runs as a
// container's PID 1.
func (r *Reaper) Run(ctx context.Context) { <-ctx.Done() }
