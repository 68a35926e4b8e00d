// Package misplace notices pods that isamatch exists to keep away from the
// wrong node and that got there anyway: a container that died of SIGILL
// (an instruction its node lacks) or could not start with "exec format
// error" (a binary of another architecture). Such a pod was admitted while
// the webhook failed open, before isamatch was installed, or with an image
// that does not say what it needs.
//
// [Detect] reads the failures from a pod's status; it is pure. A [Watcher]
// records one Warning Event per failed container on the pod
// (ReasonMisplaced), naming the node's ISA and what the pod needs where
// that is known, counts it (isamatch_runtime_misplacements_total{reason})
// and, when asked, evicts a controller-owned pod isamatch did not decide,
// so that its replacement is admitted with a decision.
//
// The entry point is [Setup]: it adds to a controller-runtime manager, on
// the elected leader only, an informer of the scheduled pods (the
// manager's own cache holds unscheduled pods only) whose objects are cut to
// what the watcher and the audit read ([Slim]), so each cached pod costs a
// few hundred bytes, whatever its spec. [Runner.Pods] lists them for
// package audit.
package misplace
