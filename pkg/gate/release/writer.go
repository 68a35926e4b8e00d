package release

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// Event reasons on a released pod.
const (
	ReasonReleased = "IsamatchReleased"
	ReasonTimeout  = "IsamatchGateTimeout"
	ReasonNarrowed = "IsamatchNarrowed"
	ReasonDenied   = "IsamatchDenied"
	ReasonRefused  = "IsamatchRefused"
)

// ReleaseRefused is the release reason counted when the API server refused
// the affinity and the pod was released with the gate removed only.
const ReleaseRefused = "refused"

// Patcher writes next, a changed copy of pod, over it. It fails with a
// Conflict when the pod changed since pod was read (an optimistic lock),
// NotFound when it is gone and Invalid when the API server refuses next.
type Patcher func(ctx context.Context, pod, next *corev1.Pod) error

// Writer writes releases.
type Writer struct {
	Patch    Patcher
	Recorder events.EventRecorder
	// Released, when set, is told each written release's reason (a
	// mutate.Release* constant or ReleaseRefused) and how long the pod
	// was gated, in seconds.
	Released func(reason string, heldSeconds float64)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Write patches pod into next, the release rel, and records it. A pod
// deleted meanwhile is no error; a Conflict is returned (read the pod
// again and decide again).
func (w *Writer) Write(ctx context.Context, pod, next *corev1.Pod, rel mutate.GateRelease) error {
	log := logr.FromContextOrDiscard(ctx)
	err := w.Patch(ctx, pod, next)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsInvalid(err):
		// The API server refused the affinity: never hold the pod for it.
		log.Info("affinity refused, releasing the pod without it", "error", err.Error())
		return w.releaseBare(ctx, pod, err)
	case err != nil:
		return fmt.Errorf("release pod: %w", err)
	}
	w.count(rel.Reason, pod)
	w.event(next, rel)
	log.V(1).Info("released", "reason", rel.Reason)
	return nil
}

func (w *Writer) count(reason string, pod *corev1.Pod) {
	if w.Released != nil {
		w.Released(reason, w.now().Sub(pod.CreationTimestamp.Time).Seconds())
	}
}

// event records rel on pod.
func (w *Writer) event(pod *corev1.Pod, rel mutate.GateRelease) {
	reason, kind := ReasonReleased, corev1.EventTypeNormal
	switch {
	case rel.Reason == mutate.ReleaseTimeout:
		reason, kind = ReasonTimeout, corev1.EventTypeWarning
	case rel.Reason == mutate.ReleaseDenied:
		reason, kind = ReasonDenied, corev1.EventTypeWarning
	case rel.Warning:
		reason, kind = ReasonNarrowed, corev1.EventTypeWarning
	}
	w.Recorder.Eventf(pod, nil, kind, reason, "Release", "%s", rel.Message)
}

// releaseBare removes only the gate, with a decision annotation and a
// warning saying why.
func (w *Writer) releaseBare(ctx context.Context, pod *corev1.Pod, cause error) error {
	next := pod.DeepCopy()
	gates := next.Spec.SchedulingGates[:0]
	for _, g := range next.Spec.SchedulingGates {
		if g.Name != isa.ResolveGate {
			gates = append(gates, g)
		}
	}
	next.Spec.SchedulingGates = gates
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	msg := "released without isamatch's affinity: the API server refused it"
	next.Annotations[isa.DecisionAnnotation] = contract.DecisionCounts{Gate: contract.GateRefused, Reason: msg}.Encode()
	delete(next.Annotations, isa.DecisionCountsAnnotation)
	if err := w.Patch(ctx, pod, next); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("release pod without affinity: %w", err)
	}
	w.count(ReleaseRefused, pod)
	w.Recorder.Eventf(next, nil, corev1.EventTypeWarning, ReasonRefused, "Release", "%s: %s", msg, cause.Error())
	return nil
}
