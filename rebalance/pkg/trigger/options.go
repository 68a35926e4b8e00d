package trigger

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
)

// Defaults of the trigger flags.
const (
	// DefaultMinInterval is the shortest time between the starts of two
	// triggered cycles.
	DefaultMinInterval = 30 * time.Second
	// DefaultNodeCooldown is the shortest time between two cycles one
	// node starts: the shipped --descheduling-interval, so a node's owner
	// can at most double the cycles.
	DefaultNodeCooldown = 5 * time.Minute
	// DefaultThresholdRearm is how many percentage points below the
	// threshold a node that crossed it must drop to cross again.
	DefaultThresholdRearm = 10
)

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
	// NodeCooldown is the shortest time between two cycles one node
	// starts.
	NodeCooldown time.Duration
	// ThresholdRearm, in percentage points, is how far below the
	// threshold a node that crossed it must drop to cross again.
	ThresholdRearm int
}

// DefaultOptions has both triggers on, at most one triggered cycle per
// DefaultMinInterval.
func DefaultOptions() Options {
	return Options{NodeJoin: true, Threshold: true, MinInterval: DefaultMinInterval, NodeCooldown: DefaultNodeCooldown, ThresholdRearm: DefaultThresholdRearm}
}

// AddFlags adds the trigger flags to fs, defaulting to o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.NodeJoin, "trigger-on-node-join", o.NodeJoin,
		"Start a cycle at once when a node joins (turns Ready and schedulable, or gets new isamatch ISA labels), without waiting for --descheduling-interval.")
	fs.BoolVar(&o.Threshold, "trigger-on-threshold", o.Threshold,
		"Start a cycle at once when a node's requested CPU share crosses the highThreshold of the policy's WeightedLoad plugin upward (no effect without WeightedLoad).")
	fs.DurationVar(&o.MinInterval, "trigger-min-interval", o.MinInterval,
		"Shortest time between the starts of two triggered cycles; events in between coalesce into one cycle.")
	fs.DurationVar(&o.NodeCooldown, "trigger-node-cooldown", o.NodeCooldown,
		"Shortest time between two cycles started by the same node (a node's first join and its first ISA group label are exempt): a node whose owner flips its labels, readiness or load starts at most one cycle per cooldown.")
	fs.IntVar(&o.ThresholdRearm, "trigger-threshold-rearm", o.ThresholdRearm,
		"Percentage points below the CPU threshold a node that crossed it must drop before crossing it again starts another cycle.")
}

// Validate rejects negative durations and a re-arm band outside 0-100.
func (o Options) Validate() error {
	if o.MinInterval < 0 {
		return fmt.Errorf("--trigger-min-interval=%s: want 0 or more", o.MinInterval)
	}
	if o.NodeCooldown < 0 {
		return fmt.Errorf("--trigger-node-cooldown=%s: want 0 or more", o.NodeCooldown)
	}
	if o.ThresholdRearm < 0 || o.ThresholdRearm > 100 {
		return fmt.Errorf("--trigger-threshold-rearm=%d: want percentage points from 0 to 100", o.ThresholdRearm)
	}
	return nil
}

// Watch returns the WatchOptions of these flags for the policy's CPU
// threshold (0: none) and node selector.
func (o Options) Watch(threshold int64, sel labels.Selector) WatchOptions {
	if !o.Threshold {
		threshold = 0
	}
	return WatchOptions{
		NodeJoin: o.NodeJoin, Threshold: threshold, Rearm: int64(o.ThresholdRearm),
		Cooldown: o.NodeCooldown, Selector: sel,
	}
}

// Any reports whether a trigger is on.
func (o Options) Any() bool { return o.NodeJoin || o.Threshold }
