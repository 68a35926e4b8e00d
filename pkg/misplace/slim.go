package misplace

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// maxValue bounds one annotation or label value kept: a request longer
// than this is malformed anyway, and the cut keeps it so.
const maxValue = 4 << 10

// keptAnnotations and keptLabels are the keys the watcher and the audit
// read (engine.PodInput's, the decision's, the mirror marker).
var (
	keptAnnotations = []string{isa.RequestAnnotation, isa.QEMUAnnotation, isa.BareRequestAnnotation, isa.BareQEMUAnnotation,
		isa.DecisionAnnotation, isa.DecisionCountsAnnotation, corev1.MirrorPodAnnotationKey}
	keptLabels = []string{isa.RequestLabel, isa.QEMULabel, isa.IgnoreLabel}
)

// Slim is the transform of the informer of scheduled pods (package
// pkg/misplace/watch): it cuts a pod to what the watcher and the audit
// read, so the cache holds a few hundred bytes per pod whatever its spec
// (environment, volumes, managed fields are dropped). Anything but a
// *corev1.Pod (a tombstone) passes unchanged.
func Slim(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
			Annotations: keep(pod.Annotations, keptAnnotations), Labels: keep(pod.Labels, keptLabels),
		},
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		out.OwnerReferences = []metav1.OwnerReference{{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Controller: ref.Controller}}
	}
	s := &out.Spec
	s.NodeName, s.NodeSelector = pod.Spec.NodeName, pod.Spec.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}
	}
	s.InitContainers = containers(pod.Spec.InitContainers)
	s.Containers = containers(pod.Spec.Containers)
	out.Status.Phase = pod.Status.Phase
	out.Status.InitContainerStatuses = statuses(pod.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = statuses(pod.Status.ContainerStatuses)
	return out, nil
}

func keep(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			if len(v) > maxValue {
				v = v[:maxValue]
			}
			out[k] = v
		}
	}
	return out
}

func containers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for k, c := range cs {
		out[k] = corev1.Container{Name: c.Name, Image: c.Image}
	}
	return out
}

// statuses keeps of each container status what Detect reads, with the
// messages cut.
func statuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if ss == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for k, s := range ss {
		out[k] = corev1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount,
			State: state(s.State), LastTerminationState: state(s.LastTerminationState)}
	}
	return out
}

func state(s corev1.ContainerState) corev1.ContainerState {
	var out corev1.ContainerState
	if w := s.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: cutMessage(w.Message)}
	}
	if t := s.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Signal: t.Signal, Reason: t.Reason, Message: cutMessage(t.Message)}
	}
	if s.Running != nil {
		out.Running = &corev1.ContainerStateRunning{}
	}
	return out
}

// cutMessage keeps the start of a runtime message, where runc names the
// error, and its end, where the kernel's text ("exec format error") is.
func cutMessage(m string) string {
	const half = maxMessage / 2
	if len(m) <= maxMessage {
		return m
	}
	return m[:half] + " … " + m[len(m)-half:]
}
