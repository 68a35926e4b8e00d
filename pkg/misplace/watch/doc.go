// Package watch watches the scheduled pods for runtime misplacements (what
// package misplace detects) on the webhook's elected leader. A [Watcher]
// records one Warning Event per failed container on the pod
// (ReasonMisplaced), naming the node's ISA and what the pod needs where
// that is known, counts it (isamatch_runtime_misplacements_total{reason})
// and, when asked, evicts a controller-owned pod isamatch did not decide,
// so that its replacement is admitted with a decision.
//
// The entry point is [Setup]: it adds to a controller-runtime manager, on
// the elected leader only, an informer of the scheduled pods (the
// manager's own cache holds unscheduled pods only) whose objects are cut to
// what the watcher and the audit read (misplace.Slim) and stored as a
// misplace.Record, so each cached pod costs a few hundred bytes, whatever
// its spec and however many pods there are. [Runner.Pods] yields them for
// the audit's scanner (package pkg/audit/scanner).
package watch
