// Package gate is the controller that releases the pods the isamatch
// webhook admitted with the scheduling gate isa.ResolveGate: it resolves
// their images, writes the node affinity the webhook's decision code
// (mutate.PodMutator.ReleaseGated) computes and removes the gate, in one
// update. A pod is never held longer than a bound: past it the pod is
// released with what is known, with a Warning event and the metric
// isamatch_webhook_gate_releases_total{reason="timeout"}.
//
// The controller's workers are shared by every namespace, so no call may
// hold one for long, and no namespace may hold many. A call waits for a
// pod's images at most Attempt (2s); if they are still being looked up
// then, it gives the worker back and asks to be called again shortly: the
// lookup goes on in the resolver's shared background flight (and an ELF
// read in the inferrer's), whose result is cached, and a later call picks
// it up without a registry request. And at most PerNamespace calls of one
// namespace (a quarter of the workers) wait at once: a pod of a namespace
// at its share is tried again after a short delay, without waiting. So a
// namespace flooding gated pods that name slow registries holds at most a
// quarter of the workers, each for at most one attempt, and a slow
// registry holds a worker for one attempt only. The bound is kept: a call
// never waits past it, and a call past it releases the pod from the cache
// alone, whatever its namespace's share.
//
// The entry point is [Setup], which adds the [Reconciler] to a
// controller-runtime manager; it runs on the elected leader only. The
// release is written by pkg/gate/release, which `kubectl isa ungate`
// shares.
package gate
