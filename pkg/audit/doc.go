// Package audit lists the running pods whose node cannot run what they
// need, and the pods isamatch should have decided but did not (admitted
// while its webhook failed open, or before it was installed). It is what
// `kubectl isa audit` prints and what the webhook's leader exports as the
// gauge isamatch_misplaced_pods{reason}.
//
// [Audit] is pure: pods, their nodes' labels, an inventory snapshot and
// the webhook's [Scope] in, one [Finding] per misplaced pod out, each with
// its reasons:
//
//   - ReasonUndecided: the webhook handles the pod's namespace and labels
//     (Scope), but the pod carries no decision;
//   - ReasonRequest: the pod's own ISA request (isa.request, ARCH,
//     isa.qemu, ...) cannot be met by its node, judged by the decision the
//     webhook would make for that request now (engine.Matcher);
//   - ReasonAffinity: a decided pod's node no longer satisfies the pod's
//     required node affinity, which holds what its images needed at
//     admission (the node's labels changed after it was scheduled);
//   - ReasonRuntime: a container died of SIGILL or "exec format error"
//     (misplace.Detect).
//
// [ScopeFrom] reads the Scope from the webhook's
// MutatingWebhookConfiguration. The package links no Kubernetes client.
//
// Package pkg/audit/scanner runs Audit periodically on the webhook's
// elected leader over the scheduled pods of package pkg/misplace/watch and
// sets the gauges; it also exports the node inventory
// (isamatch_nodes{arch,labelled}, isamatch_isa_groups) and the pods still
// gated past the gate's bound (isamatch_gated_pods_overdue).
package audit
