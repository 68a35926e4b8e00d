// Package labeler keeps a Node's isamatch labels and annotations equal to
// what a probe found, touching nothing else.
//
// The entry point is [Reconcile]: it reads the Node, computes the change
// with [Diff] (set ours, delete ours that no longer apply, leave every key
// outside isa.isamatch.io/ and qemu.isamatch.io/ alone) and sends one JSON
// merge patch naming only our keys, or no request at all when nothing
// changed. [Controller] wraps it for controller-runtime: it re-probes on an
// interval and reconciles whenever the Node changes, records an Event on the
// Node for each change (what changed, and the probe's account of why) and
// each failed probe, and counts probes, failures by source and keys written
// in [Metrics].
package labeler
