package misplace

import (
	"fmt"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Record is what the informer of scheduled pods (package
// pkg/misplace/watch) keeps of a pod: Slim's cut, stored in a few hundred
// bytes whatever the number of pods alike. A *corev1.Pod, even cut, is
// over 1 KB of struct before its strings; a cluster of 100,000 pods would
// cost the webhook's leader that many.
//
//   - What the pods of one controller share (the kept annotations and
//     labels, the controller reference, the node selector, the required
//     node affinity, the containers' names and images) is stored once,
//     encoded, and interned: each Record holds a handle to it.
//   - The namespace and the node name are interned too.
//   - The container statuses are kept only when Detect finds a failure in
//     them; otherwise Detect of the Record's pod finds none either.
//
// Records are immutable; Pod builds the cut pod again for each reader.
type Record struct {
	name, resourceVersion string
	uid                   types.UID
	namespace, nodeName   unique.Handle[string]
	created               metav1.Time
	deleting              *metav1.Time
	phase                 corev1.PodPhase
	shared                unique.Handle[string]
	status                *corev1.PodStatus
}

// GetObjectMeta is the Record's identity, for the informer's key
// function and resource version checks (meta.Accessor).
func (r *Record) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: r.name, Namespace: r.namespace.Value(), UID: r.uid, ResourceVersion: r.resourceVersion}
}

// Compact is the transform of the informer of scheduled pods: a
// *corev1.Pod becomes its *Record. Anything else (a tombstone) passes
// unchanged.
func Compact(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	obj, _ = Slim(pod)
	slim := obj.(*corev1.Pod)
	r := &Record{
		name: slim.Name, resourceVersion: slim.ResourceVersion, uid: slim.UID,
		namespace: unique.Make(slim.Namespace), nodeName: unique.Make(slim.Spec.NodeName),
		created: slim.CreationTimestamp, deleting: slim.DeletionTimestamp, phase: phase(slim.Status.Phase),
	}
	if len(Detect(slim)) > 0 {
		st := slim.Status
		r.status = &corev1.PodStatus{InitContainerStatuses: st.InitContainerStatuses, ContainerStatuses: st.ContainerStatuses}
	}
	shared := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: slim.Annotations, Labels: slim.Labels, OwnerReferences: slim.OwnerReferences},
		Spec: corev1.PodSpec{NodeSelector: slim.Spec.NodeSelector, Affinity: slim.Spec.Affinity, InitContainers: slim.Spec.InitContainers, Containers: slim.Spec.Containers}}
	raw, err := shared.Marshal() // deterministic: map keys sorted
	if err != nil {
		return nil, fmt.Errorf("encode pod %s/%s for the cache: %w", pod.Namespace, pod.Name, err)
	}
	r.shared = unique.Make(string(raw))
	return r, nil
}

// Failed reports whether Detect finds a failure in the pod's container
// statuses.
func (r *Record) Failed() bool { return r.status != nil }

// Pod is the pod as Slim cut it (the container statuses only when they
// hold a failure Detect finds). Each call returns a new pod.
func (r *Record) Pod() *corev1.Pod {
	pod := &corev1.Pod{}
	if err := pod.Unmarshal([]byte(r.shared.Value())); err != nil {
		// Compact encoded it; a failure here is a bug, not input.
		panic(fmt.Sprintf("decode cached pod %s/%s: %v", r.namespace.Value(), r.name, err))
	}
	pod.TypeMeta = metav1.TypeMeta{}
	pod.Name, pod.Namespace, pod.UID, pod.ResourceVersion = r.name, r.namespace.Value(), r.uid, r.resourceVersion
	pod.CreationTimestamp, pod.DeletionTimestamp = r.created, r.deleting
	pod.Spec.NodeName = r.nodeName.Value()
	pod.Status.Phase = r.phase
	if r.status != nil {
		pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = r.status.InitContainerStatuses, r.status.ContainerStatuses
	}
	return pod
}

// phase returns the constant for a known phase, so that records do not
// each hold a copy of the decoded string.
func phase(p corev1.PodPhase) corev1.PodPhase {
	for _, known := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown} {
		if p == known {
			return known
		}
	}
	return p
}
