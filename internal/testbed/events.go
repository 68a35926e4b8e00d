package testbed

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DecisionNote returns the note of the Event that carries the readable
// decision for pod: the webhook's IsamatchDecided or, for a pod that went
// through the scheduling gate, the gate controller's release
// (IsamatchReleased and the other reasons of pkg/gate). The pod stores
// only the decision's numbers. "" when there is none yet: wait for it.
func DecisionNote(ctx context.Context, c client.Reader, pod *corev1.Pod) (string, error) {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return "", fmt.Errorf("list events of %s: %w", pod.Namespace, err)
	}
	var notes []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind != "Pod" || e.Regarding.Name != pod.Name || (pod.UID != "" && e.Regarding.UID != pod.UID) {
			continue
		}
		// The webhook's Decide (IsamatchDecided) and the gate controller's
		// Release (pkg/gate's reasons); both carry the readable line.
		if strings.HasPrefix(e.Reason, "Isamatch") && (e.Reason == "IsamatchDecided" || e.Action == "Release") {
			notes = append(notes, e)
		}
	}
	if len(notes) == 0 {
		return "", nil
	}
	slices.SortFunc(notes, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	return notes[len(notes)-1].Note, nil
}
