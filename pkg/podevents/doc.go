// Package podevents records, on each pod the isamatch webhook decided, the
// Events (events.k8s.io/v1) that say why it lands where it does, so that
// kubectl describe pod shows them:
//
//   - Normal IsamatchDecided: how many nodes isamatch's required affinity
//     admits now, the preferred tiers and the decision line (Warning when
//     enforcement=warn admitted a pod it would have denied);
//   - Warning IsamatchImageUnresolved: one per image whose platforms could
//     not be resolved (the pod was placed without that image's constraint);
//   - Warning IsamatchNoNode: isamatch requires something no node satisfies
//     now, and the pod is unscheduled.
//
// They are recorded after admission, because a pod has no UID during
// admission and an Event must name one. Everything comes from the two
// decision annotations the webhook wrote (isa.DecisionAnnotation and
// isa.DecisionCountsAnnotation, see contract.DecisionCounts); nothing is read
// from the API server.
//
// Gated pods (isa.ResolveGate) are reported once the gate controller has
// released them, and without IsamatchDecided: the gate controller records
// its own event for the release (release.ReasonReleased and the others, pkg/gate/release), which
// is their decision. A pod released as denied gets nothing more.
//
// Once per pod: a [Reporter] remembers the UIDs it reported, in a set
// bounded by count that forgets a pod when it leaves the watch (scheduled
// or deleted). The pods' own objects are never written to (the webhook's
// pod policy allows it no change but the affinity, the gate and the two
// decision annotations). A new leader reports again the pods still
// unscheduled when it starts, so such a pod may carry its events twice
// after a leader change (once per leader).
//
// Written directly: a [Writer] creates each Event with one API call and
// keeps nothing, where client-go's recorder keeps every Event six minutes
// or more to merge repeats into a series, and these never repeat.
//
// Paced: the Events go through a [Pacer], at most Options.QPS a second
// (events.qps, default DefaultQPS), newest first, at most QueueLen waiting
// (past it the oldest is dropped and counted). They are the only write
// the leader makes per admitted pod; written as fast as pods arrive, a
// burst's Events would slow the admissions that follow it.
//
// The entry point is [Setup]: it adds to a controller-runtime manager a
// runnable, elected leader only, that handles the pod informer's events
// directly. There is no work queue on purpose: the manager's pod cache
// holds unscheduled pods only, so a reconciler reading a pod back from it
// would miss the pods the scheduler bound in between, which is most of
// them. The informer is the one the gate controller uses, so it carries no
// transform of its own: the gate controller computes its patches from the
// cached pod, and a stripped pod would make them delete fields.
package podevents
