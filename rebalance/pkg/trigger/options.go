package trigger

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// DefaultMinInterval is the default shortest time between the starts of
// two triggered cycles.
const DefaultMinInterval = 30 * time.Second

// Options are the trigger flags.
type Options struct {
	// NodeJoin starts a cycle when a node joins.
	NodeJoin bool
	// Threshold starts a cycle when a node's requested CPU share crosses
	// the WeightedLoad profile's highThreshold upward.
	Threshold bool
	// MinInterval is the shortest time between the starts of two
	// triggered cycles.
	MinInterval time.Duration
}

// DefaultOptions has both triggers on, at most one triggered cycle per
// DefaultMinInterval.
func DefaultOptions() Options {
	return Options{NodeJoin: true, Threshold: true, MinInterval: DefaultMinInterval}
}

// AddFlags adds the trigger flags to fs, defaulting to o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.NodeJoin, "trigger-on-node-join", o.NodeJoin,
		"Start a cycle at once when a node joins (turns Ready and schedulable, or gets new isamatch ISA labels), without waiting for --descheduling-interval.")
	fs.BoolVar(&o.Threshold, "trigger-on-threshold", o.Threshold,
		"Start a cycle at once when a node's requested CPU share crosses the highThreshold of the policy's WeightedLoad plugin upward (no effect without WeightedLoad).")
	fs.DurationVar(&o.MinInterval, "trigger-min-interval", o.MinInterval,
		"Shortest time between the starts of two triggered cycles; events in between coalesce into one cycle.")
}

// Validate rejects a negative MinInterval.
func (o Options) Validate() error {
	if o.MinInterval < 0 {
		return fmt.Errorf("--trigger-min-interval=%s: want 0 or more", o.MinInterval)
	}
	return nil
}

// Any reports whether a trigger is on.
func (o Options) Any() bool { return o.NodeJoin || o.Threshold }
