// Package release writes a gated pod's release: the pod as
// mutate.PodMutator.ReleaseGated decided it, with isa.ResolveGate removed,
// patched over the pod as it was read (failing if it changed since), with
// the pod's Event and the release counted. When the API server refuses the
// affinity the pod is released with the gate removed only, so no pod is
// ever held for isamatch's sake.
//
// The gate controller (pkg/gate) and `kubectl isa ungate` write releases
// with the same [Writer]: the controller through controller-runtime's
// client, the plugin through client-go ([ClientsetPatcher]). The package
// links no controller-runtime.
package release
