// Package trigger starts rebalancer cycles on events as well as on the
// timer. descheduler runs its cycles on a timer only (wait.NonSlidingUntil
// over --descheduling-interval); Loop runs them itself, one
// descheduler cycle each, and starts one early when Watch reports that a
// node joined (turned Ready and schedulable, or got new isamatch ISA
// labels) or crossed the CPU threshold upward (the sum of its pods' CPU
// requests reached highThreshold percent of its allocatable CPU, the
// share WeightedLoad puts at the head of its queue).
//
// Edges, not levels: a node that stays above the threshold starts no
// further cycle until it has dropped ThresholdRearm points below it, and
// nothing in the informers' initial list starts one (the first cycle runs
// at start anyway). What the triggers read about a node is in its owner's
// hands, so one node starts at most one cycle per Options.NodeCooldown
// (its first join and first group label excepted). Triggered cycles are at
// most one per Options.MinInterval; events in between coalesce into one
// pending cycle.
package trigger
