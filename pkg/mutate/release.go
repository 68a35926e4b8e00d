package mutate

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Reasons a gated pod is released (GateRelease.Reason).
const (
	ReleaseResolved = "resolved"
	ReleaseTimeout  = "timeout"
	ReleaseDenied   = contract.GateDenied
	ReleaseSkipped  = "skipped"
)

// GateRelease says what ReleaseGated did, for the controller's event.
type GateRelease struct {
	// Reason is one of the Release* constants.
	Reason string
	// Warning is set when the pod's event is a warning: a timeout, a
	// denial or a narrowed affinity.
	Warning bool
	// Message is the event's text.
	Message string
	// Pending is set when resolve was set and ctx ended while an image was
	// still being looked up or read: then nothing was decided, pod is left
	// as it was and nothing is logged or counted. The lookups and reads go
	// on in the background and their results are cached: ask again later,
	// and past the pod's bound with resolve unset.
	Pending bool
}

// ReleaseGated is the gate controller's decision for a pod that carries
// isa.ResolveGate: the decision admission would have made with the pod's
// images resolved, written as the rules for gated pods allow
// (narrowRequired), with the gate removed, all in pod, which the caller
// writes back in one update. With resolve set, images are looked up (and
// read, see infer) until ctx ends, and if ctx ends first the answer is
// Pending; with resolve unset, only the cache is read, images it does not
// hold are left out (as admission leaves out an image past its budget) and
// the release is a timeout. A pod the images and request contradict is
// released as admission would have answered it: in deny mode every
// required term gains a requirement no node meets (it can never run
// correctly; the event says how to fix it), in warn mode it keeps only
// what admission wrote.
func (p *PodMutator) ReleaseGated(ctx context.Context, pod *corev1.Pod, resolve bool) GateRelease {
	r := p.releaseGated(ctx, pod, resolve)
	if r.Pending {
		return r
	}
	pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == isa.ResolveGate })
	if len(pod.Spec.SchedulingGates) == 0 {
		pod.Spec.SchedulingGates = nil
	}
	return r
}

func (p *PodMutator) releaseGated(ctx context.Context, pod *corev1.Pod, resolve bool) GateRelease {
	f := fieldsOf(pod)
	switch {
	case pod.Spec.NodeName != "", pod.Annotations[corev1.MirrorPodAnnotationKey] != "",
		slices.Contains(p.opts.SkipNamespaces, pod.Namespace), pod.Labels[isa.IgnoreLabel] == "true":
		return GateRelease{Reason: ReleaseSkipped, Message: "isamatch does not place this pod (bound, mirror, skipped namespace or " + isa.IgnoreLabel + "=true); gate " + isa.ResolveGate + " removed"}
	}
	in, warnings, msg := p.podInput(f)
	if msg != "" {
		return p.releaseDenied(ctx, pod, msg)
	}
	refs := podImages(f)
	if len(refs) > MaxImages {
		return p.releaseDenied(ctx, pod, tooManyImages())
	}
	auth := pullAuth(pod.Namespace, f)
	images, pending := p.cached(refs, auth)
	if len(pending) > 0 && resolve {
		p.fetch(ctx, auth, refs, images, pending)
	}
	timedOut := false
	for _, k := range pending {
		if images[k].err != nil && engine.ErrorKind(images[k].err) == "timeout" {
			timedOut = true
		}
	}
	var unread []int
	if p.infers(in) {
		unread = p.infer(ctx, auth, images, resolve)
	}
	// A lookup that timed out while ctx still ran is the registry's own
	// answer (cached as such), not one still to come.
	if resolve && ((timedOut && ctx.Err() != nil) || len(unread) > 0) {
		return GateRelease{Pending: true, Message: "images still being looked up or read"}
	}
	in.Images, in.Fallback = engineImages(images), p.opts.FallbackArchitecture
	p.logImageErrors(ctx, images)
	d := p.m.Decide(in, p.inv.Snapshot())
	d.Warnings = append(warnings, d.Warnings...)
	if d.Denied != "" {
		return p.releaseDenied(ctx, pod, d.Denied)
	}

	na := &corev1.NodeAffinity{}
	if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
		na = pod.Spec.Affinity.NodeAffinity.DeepCopy()
	}
	cur := na.RequiredDuringSchedulingIgnoredDuringExecution
	required, narrowed, ok, err := engine.NarrowRequired(cur, d.Required, p.opts.MaxRequiredTerms)
	switch {
	case err != nil:
		return p.releaseDenied(ctx, pod, err.Error())
	case !ok:
		return p.releaseDenied(ctx, pod, fmt.Sprintf("the pod's required node affinity excludes every node isamatch allows (%s); remove the conflicting requirement", d.RequiredText))
	case !engine.IsNarrowingOf(required, cur): // narrowRequired's contract; kept as a guard
		return p.releaseDenied(ctx, pod, "isamatch could not write its affinity as an addition to the pod's own required terms")
	case len(d.Required) > 0 && engine.ExcludesAll(pod.Spec.NodeSelector, required):
		return p.releaseDenied(ctx, pod, fmt.Sprintf("the pod's spec.nodeSelector excludes every node isamatch allows (%s); remove or change it", d.RequiredText))
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution = required
	na.PreferredDuringSchedulingIgnoredDuringExecution = engine.MergePreferred(na.PreferredDuringSchedulingIgnoredDuringExecution, d.Preferred)
	if na.RequiredDuringSchedulingIgnoredDuringExecution != nil || len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		pod.Spec.Affinity.NodeAffinity = na
	}

	r := GateRelease{Reason: ReleaseResolved, Message: "images resolved"}
	d.Counts.Gate = contract.GateResolved
	if timedOut {
		r = GateRelease{Reason: ReleaseTimeout, Warning: true, Message: "released past the gate's time bound, images not resolved are left out of the node affinity"}
		d.Counts.Gate = contract.GateTimeout
	}
	if narrowed {
		d.Counts.Narrowed = true
		d.Summary += "; narrowed: the pod's own required terms can each hold one alternative only (a gated pod's terms may gain requirements, not be added): the first that fits each term was kept"
		r.Warning = true
	}
	keepEmulator(pod, &d)
	r.Message = sanitize.Line(r.Message+"; "+d.Summary, maxEventNote)
	setDecision(pod, d.Counts)
	logr.FromContextOrDiscard(ctx).V(1).Info("released", "reason", r.Reason, "requiredTerms", len(d.Required), "narrowed", narrowed)
	return r
}

// releaseDenied releases a pod admission would have answered with msg.
func (p *PodMutator) releaseDenied(ctx context.Context, pod *corev1.Pod, msg string) GateRelease {
	if p.enforcement(ctx, pod.Namespace) == EnforcementWarn {
		setDecision(pod, contract.DecisionCounts{WouldDeny: true, Gate: ReleaseDenied, Reason: msg})
		return GateRelease{Reason: ReleaseDenied, Warning: true, Message: "isamatch would deny this pod: " + msg}
	}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	na.RequiredDuringSchedulingIgnoredDuringExecution = engine.MatchNoNode(na.RequiredDuringSchedulingIgnoredDuringExecution)
	setDecision(pod, contract.DecisionCounts{Gate: ReleaseDenied, Reason: msg})
	return GateRelease{Reason: ReleaseDenied, Warning: true, Message: sanitize.Line("isamatch denies this pod, no node will match it: "+msg+"; delete it and create it again with the fix", maxWarning)}
}

// maxEventNote is the most an Event's note may hold (events.k8s.io/v1: 1 kB).
const maxEventNote = 1024

// setDecision writes the decision annotation on pod.
func setDecision(pod *corev1.Pod, c contract.DecisionCounts) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	storeDecision(pod.Annotations, c)
}

// fieldsOf is the projection of pod the decision reads.
func fieldsOf(pod *corev1.Pod) *podFields {
	f := &podFields{ObjectMeta: pod.ObjectMeta}
	s := &f.Spec
	s.NodeName, s.NodeSelector, s.ServiceAccountName = pod.Spec.NodeName, pod.Spec.NodeSelector, pod.Spec.ServiceAccountName
	s.ImagePullSecrets, s.Affinity, s.SchedulingGates = pod.Spec.ImagePullSecrets, pod.Spec.Affinity, pod.Spec.SchedulingGates
	for _, c := range pod.Spec.InitContainers {
		s.InitContainers = append(s.InitContainers, containerImage{Image: c.Image})
	}
	for _, c := range pod.Spec.Containers {
		s.Containers = append(s.Containers, containerImage{Image: c.Image})
	}
	return f
}
