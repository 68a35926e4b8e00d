// Package unresolved releases pods from isamatch's scheduling gate without
// a decision: the release of last resort, for when no gate controller will
// ever release them (isamatch uninstalled, `kubectl isa ungate`). It needs
// no more than a client, so that the labeler's --prune links none of the
// webhook.
package unresolved

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// PodPatcher is what [Release] needs: patch a pod.
type PodPatcher interface {
	Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
}

// PodListPatcher is what [ReleaseAll] needs: list and read pods,
// then patch them.
type PodListPatcher interface {
	client.Reader
	PodPatcher
}

// Decision is the decision annotation of a pod released by Release,
// before the reason.
const Decision = "released without isamatch's affinity: "

// Release removes isa.ResolveGate from pod, keeping its other
// gates in order, and says why in its decision annotation (Decision
// + reason): the pod is scheduled with the affinity it has, none of
// isamatch's. It is the release of last resort, for when no gate controller
// will ever release the pod (isamatch uninstalled, `kubectl isa ungate`).
// One patch, which fails if the pod changed since it was read (read it
// again and retry). It reports whether it released the pod: a pod without
// the gate, gone or being deleted is left alone.
func Release(ctx context.Context, c PodPatcher, pod *corev1.Pod, reason string) (bool, error) {
	if !engine.HasGate(pod.Spec.SchedulingGates) || pod.DeletionTimestamp != nil {
		return false, nil
	}
	next := pod.DeepCopy()
	next.Spec.SchedulingGates = nil
	for _, g := range pod.Spec.SchedulingGates {
		if g.Name != isa.ResolveGate {
			next.Spec.SchedulingGates = append(next.Spec.SchedulingGates, g)
		}
	}
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[isa.DecisionAnnotation] = Decision + reason
	err := c.Patch(ctx, next, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("release pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	*pod = *next
	return true, nil
}

// ReleaseAll releases, with Release, every pod of the
// cluster that carries isa.ResolveGate. A pod that changed between the list
// and the patch is read again and tried once more. It returns the pods it
// released and every error joined: a failed pod does not stop the others.
func ReleaseAll(ctx context.Context, c PodListPatcher, reason string) ([]client.ObjectKey, error) {
	var pods corev1.PodList
	// Gated pods are unscheduled: the field selector keeps the list to them.
	if err := c.List(ctx, &pods, client.MatchingFields{"spec.nodeName": ""}); err != nil {
		return nil, fmt.Errorf("list unscheduled pods: %w", err)
	}
	var released []client.ObjectKey
	var errs []error
	for i := range pods.Items {
		pod := &pods.Items[i]
		ok, err := Release(ctx, c, pod, reason)
		if apierrors.IsConflict(err) {
			fresh := &corev1.Pod{}
			if err = c.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err == nil {
				ok, err = Release(ctx, c, fresh, reason)
			} else if apierrors.IsNotFound(err) {
				ok, err = false, nil
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			released = append(released, client.ObjectKeyFromObject(pod))
		}
	}
	return released, errors.Join(errs...)
}
