package isafit

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// reservationTTL bounds how long a move holds room on its target when its
// replacement pod never shows up (a controller scaled down, say).
const reservationTTL = 2 * time.Minute

// reservation holds room on a target node for a pod evicted earlier in
// this cycle, until its controller's replacement is bound somewhere:
// until then the fit check would see the room as free and send a second
// pod into it.
type reservation struct {
	pod   *v1.Pod // a copy of the evicted pod, bound to the target
	owner types.UID
	// live is how many bound, not terminating pods the owner had when the
	// pod was evicted (the evicted one included).
	live int
	at   time.Time
}

// reservations are the moves whose replacement pods are not bound yet.
type reservations struct {
	items []reservation
}

// add reserves room for pod on node to; live is the owner's live count.
func (r *reservations) add(pod *v1.Pod, to string, live int, now time.Time) {
	c := pod.DeepCopy()
	c.Spec.NodeName = to
	c.Status.Phase = v1.PodPending
	r.items = append(r.items, reservation{pod: c, owner: controllerUID(pod), live: live, at: now})
}

// reserved reports whether pod was evicted by a move that still holds room.
func (r *reservations) reserved(pod *v1.Pod) bool {
	for _, it := range r.items {
		if it.pod.UID == pod.UID {
			return true
		}
	}
	return false
}

// retire drops the reservations whose replacement is bound (the owner has
// as many live pods as before the eviction and the evicted pod is gone)
// or that are older than reservationTTL. list returns a namespace's pods.
func (r *reservations) retire(now time.Time, list func(namespace string) ([]*v1.Pod, error)) error {
	kept := r.items[:0]
	for _, it := range r.items {
		if now.Sub(it.at) >= reservationTTL {
			continue
		}
		pods, err := list(it.pod.Namespace)
		if err != nil {
			return err
		}
		evictedGone := true
		for _, p := range pods {
			if p.UID == it.pod.UID {
				evictedGone = false
			}
		}
		if evictedGone && (it.owner == "" || liveCount(pods, it.owner) >= it.live) {
			continue
		}
		kept = append(kept, it)
	}
	r.items = kept
	return nil
}

// wrap returns podsOn with the reserved pods added to their target nodes.
func (r *reservations) wrap(podsOn podutil.GetPodsAssignedToNodeFunc) podutil.GetPodsAssignedToNodeFunc {
	return func(node string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		pods, err := podsOn(node, filter)
		if err != nil {
			return nil, err
		}
		for _, it := range r.items {
			if it.pod.Spec.NodeName == node && (filter == nil || filter(it.pod)) {
				pods = append(pods, it.pod)
			}
		}
		return pods, nil
	}
}

// controllerUID is the UID of the pod's controlling owner, "" for none.
func controllerUID(pod *v1.Pod) types.UID {
	if ref := metav1.GetControllerOf(pod); ref != nil {
		return ref.UID
	}
	return ""
}

// liveCount counts the pods of owner that are bound, not terminating and
// not finished.
func liveCount(pods []*v1.Pod, owner types.UID) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && controllerUID(p) == owner {
			n++
		}
	}
	return n
}
