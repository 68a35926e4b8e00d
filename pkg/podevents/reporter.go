package podevents

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// EventRecorder records Events (events.k8s.io/v1); controller-runtime's
// manager.GetEventRecorder returns one.
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Reasons of the Events on a decided pod. The gate controller's reasons for
// gated pods are in package gate.
const (
	ReasonDecided         = "IsamatchDecided"
	ReasonImageUnresolved = "IsamatchImageUnresolved"
	ReasonNoNode          = "IsamatchNoNode"
)

// action is the Events' action.
const action = "Decide"

// ReportingController names isamatch's webhook as the Events' source.
const ReportingController = "isamatch-webhook"

// Bounds.
const (
	// maxNote is the most an Event's note may hold (events.k8s.io/v1: 1 kB).
	maxNote = 1024
	// DefaultMaxPods bounds the UIDs a Reporter remembers.
	DefaultMaxPods = 65536
)

// Reporter records the Events of decided pods, once per pod UID. It is safe
// for concurrent use.
type Reporter struct {
	rec  EventRecorder
	seen *uidSet
	// explain, when set (Explain), gives the decided Event its readable
	// line; without it the note carries the stored numbers only.
	explain *explainer
}

// NewReporter returns a Reporter that records with rec and remembers at
// most maxPods UIDs (DefaultMaxPods when maxPods <= 0); past that, the
// oldest are forgotten first.
func NewReporter(rec EventRecorder, maxPods int) *Reporter {
	if maxPods <= 0 {
		maxPods = DefaultMaxPods
	}
	return &Reporter{rec: rec, seen: newUIDSet(maxPods)}
}

// Observe records pod's Events unless they were recorded already or the
// pod is not ready for them: no decision, a gate still pending, no UID, or
// being deleted. It reports whether it recorded.
func (r *Reporter) Observe(pod *corev1.Pod) bool {
	if pod.UID == "" || pod.DeletionTimestamp != nil {
		return false
	}
	c, err := contract.ParseDecision(pod.Annotations)
	if err != nil || c.Gate == contract.GatePending {
		return false
	}
	if !r.seen.add(pod.UID) {
		return false
	}
	// A released gated pod has the gate controller's event for its
	// decision; a denied one, nothing more to add.
	switch c.Gate {
	case "":
		r.decided(pod, c)
	case contract.GateDenied:
		return true
	}
	for _, u := range c.Unresolved[:min(len(c.Unresolved), contract.MaxUnresolvedListed)] {
		r.rec.Eventf(podRef(pod, u.Image), nil, corev1.EventTypeWarning, ReasonImageUnresolved, action, "%s", unresolvedNote(u))
	}
	if c.NoNode && pod.Spec.NodeName == "" {
		r.rec.Eventf(podRef(pod, ""), nil, corev1.EventTypeWarning, ReasonNoNode, action, "%s", noNodeNote())
	}
	return true
}

// decided records pod's IsamatchDecided Event: at once when it has no
// readable line to wait for, else once the explainer has it.
func (r *Reporter) decided(pod *corev1.Pod, c contract.DecisionCounts) {
	if c.WouldDeny || r.explain == nil || !r.explain.submit(pod, c) {
		r.recordDecided(pod, c, "")
	}
}

// recordDecided records the IsamatchDecided Event with the readable line
// (would-deny pods: their reason).
func (r *Reporter) recordDecided(pod *corev1.Pod, c contract.DecisionCounts, line string) {
	kind := corev1.EventTypeNormal
	if c.WouldDeny {
		kind, line = corev1.EventTypeWarning, "would deny (enforcement=warn), no affinity written: "+c.Reason
	}
	r.rec.Eventf(podRef(pod, ""), nil, kind, ReasonDecided, action, "%s", decidedNote(c, line))
}

// Forget drops uid from the pods reported: its pod left the watch.
func (r *Reporter) Forget(pod *corev1.Pod) {
	r.seen.remove(pod.UID)
}

// podRef is the Event's object: the pod or, for image, the first container
// running it (as the kubelet's Events on a container do), so that each
// image's Event is one of its own and not merged into a series with
// another's.
func podRef(pod *corev1.Pod, image string) *corev1.ObjectReference {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	if image == "" {
		return ref
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Image == image {
			ref.FieldPath = "spec.initContainers{" + c.Name + "}"
			return ref
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Image == image {
			ref.FieldPath = "spec.containers{" + c.Name + "}"
			return ref
		}
	}
	return ref
}

// decidedNote is the decision's numbers, then its line.
func decidedNote(c contract.DecisionCounts, line string) string {
	if c.WouldDeny {
		return sanitize.Line(line, maxNote)
	}
	var b strings.Builder
	switch {
	case c.NoNode:
		b.WriteString("required affinity: no node now")
	case c.RequiredNodes == 0:
		b.WriteString("required affinity: none")
	default:
		b.WriteString("required affinity: " + nodes(c.RequiredNodes) + " now")
	}
	b.WriteString("; tiers:")
	if len(c.Tiers) == 0 {
		b.WriteString(" none")
	}
	for k, t := range c.Tiers {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " w%d %s (%d group%s)", t.Weight, nodes(t.Nodes), t.Groups, plural(t.Groups))
	}
	if n := len(c.Unresolved); n > 0 {
		fmt.Fprintf(&b, "; %d image%s unresolved", n, plural(n))
	}
	if line != "" {
		b.WriteString("; decision: ")
		b.WriteString(line)
	}
	return sanitize.Line(b.String(), maxNote)
}

func unresolvedNote(u contract.UnresolvedImage) string {
	return sanitize.Line(fmt.Sprintf("image %q: platforms unknown (%s), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets",
		u.Image, u.Kind), maxNote)
}

func noNodeNote() string {
	return "no node satisfies isamatch's required node affinity now; the pod stays Pending until such a node joins, or until it is created again with another request or images; what is required is in its node affinity (kubectl isa explain tells it)"
}

func nodes(n int) string {
	return strconv.Itoa(n) + " node" + plural(n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
