package mutate

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// CachePod is the transform of the webhook's cache of unscheduled pods,
// which the gate controller, the pod Events and the audit read. Every
// pending pod of the cluster is held there until it is bound, so a burst
// of pods would otherwise hold each whole spec (environment, volumes,
// probes) in the webhook's memory. Managed fields are always dropped.
//   - A pod held by isamatch's gate is kept whole: the gate controller
//     releases it with a JSON merge patch computed against the cached pod,
//     in which a changed list (a container's env) is written whole.
//   - A pod with a decision keeps what Explain and the Events read: its
//     metadata and the fields fieldsOf reads, with its containers' names
//     and images.
//   - Any other pod keeps only what the readers filter on: its name,
//     identity, timestamps, node and scheduling gates.
//
// Anything but a *corev1.Pod passes unchanged.
func CachePod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	if engine.HasGate(pod.Spec.SchedulingGates) {
		return pod, nil
	}
	out := &corev1.Pod{TypeMeta: pod.TypeMeta}
	out.Spec.NodeName, out.Spec.SchedulingGates = pod.Spec.NodeName, pod.Spec.SchedulingGates
	if !hasDecision(pod.Annotations) {
		m := &pod.ObjectMeta
		out.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
		return out, nil
	}
	out.ObjectMeta = pod.ObjectMeta
	s := &out.Spec
	s.NodeSelector, s.ServiceAccountName, s.ImagePullSecrets = pod.Spec.NodeSelector, pod.Spec.ServiceAccountName, pod.Spec.ImagePullSecrets
	s.Affinity = pod.Spec.Affinity
	s.InitContainers = namesAndImages(pod.Spec.InitContainers)
	s.Containers = namesAndImages(pod.Spec.Containers)
	return out, nil
}

// hasDecision reports whether annotations carry a decision, in either
// format.
func hasDecision(annotations map[string]string) bool {
	_, ok := annotations[isa.DecisionAnnotation]
	if !ok {
		_, ok = annotations[isa.DecisionCountsAnnotation]
	}
	return ok
}

func namesAndImages(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for k, c := range cs {
		out[k] = corev1.Container{Name: c.Name, Image: c.Image}
	}
	return out
}
