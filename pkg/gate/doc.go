// Package gate is the controller that releases the pods the isamatch
// webhook admitted with the scheduling gate isa.ResolveGate: it resolves
// their images, writes the node affinity the webhook's decision code
// (mutate.PodMutator.ReleaseGated) computes and removes the gate, in one
// update. A pod is never held longer than a bound: past it the pod is
// released with what is known, with a Warning event and the metric
// isamatch_webhook_gate_releases_total{reason="timeout"}.
//
// The entry point is [Setup], which adds the [Reconciler] to a
// controller-runtime manager; it runs on the elected leader only.
package gate
