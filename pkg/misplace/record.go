package misplace

import (
	"fmt"
	"math"
	"slices"
	"unique"

	"github.com/google/uuid"

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
//
//   - The namespace and the node name are interned too.
//
//   - The container statuses are kept only when Detect finds a failure in
//     them; otherwise Detect of the Record's pod finds none either.
//
//   - The UID is kept as its 16 bytes, the creation time as seconds (all
//     a stored timestamp holds) and the phase as a number; what is rare (a
//     UID that is not a UUID, a phase Kubernetes does not define, a
//     deletion, a failure) goes in a side structure only those pods have.
//
// Records are immutable; Pod builds the cut pod again for each reader.
type Record struct {
	name, resourceVersion string
	uid                   [16]byte
	namespace, nodeName   unique.Handle[string]
	shared                unique.Handle[string]
	created               int64 // Unix seconds; zeroTime for none
	phase                 uint8 // index in phases; otherPhase: rare.phase
	rare                  *rareParts
}

// rareParts are what few pods have.
type rareParts struct {
	uid      types.UID // when it is not a UUID
	phase    corev1.PodPhase
	deleting *metav1.Time
	status   *corev1.PodStatus
}

// phases are the pod phases a record numbers; otherPhase is any other.
var phases = []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown}

const otherPhase = uint8(255)

// zeroTime stands for a zero creation time (Unix seconds cannot: the zero
// time.Time is year 1).
const zeroTime = math.MinInt64

// GetObjectMeta is the Record's identity, for the informer's key
// function and resource version checks (meta.Accessor).
func (r *Record) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: r.name, Namespace: r.namespace.Value(), UID: r.UID(), ResourceVersion: r.resourceVersion}
}

// UID is the pod's UID.
func (r *Record) UID() types.UID {
	if r.rare != nil && r.rare.uid != "" {
		return r.rare.uid
	}
	return types.UID(uuid.UUID(r.uid).String())
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
		name: slim.Name, resourceVersion: slim.ResourceVersion,
		namespace: unique.Make(slim.Namespace), nodeName: unique.Make(slim.Spec.NodeName),
		created: zeroTime, phase: otherPhase,
	}
	rare := rareParts{deleting: slim.DeletionTimestamp}
	if id, err := uuid.Parse(string(slim.UID)); err == nil && id.String() == string(slim.UID) {
		r.uid = id
	} else {
		rare.uid = slim.UID
	}
	if !slim.CreationTimestamp.IsZero() {
		r.created = slim.CreationTimestamp.Unix()
	}
	if k := slices.Index(phases, slim.Status.Phase); k >= 0 {
		r.phase = uint8(k)
	} else {
		rare.phase = slim.Status.Phase
	}
	if len(Detect(slim)) > 0 {
		st := slim.Status
		rare.status = &corev1.PodStatus{InitContainerStatuses: st.InitContainerStatuses, ContainerStatuses: st.ContainerStatuses}
	}
	if rare != (rareParts{}) {
		r.rare = &rare
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
func (r *Record) Failed() bool { return r.rare != nil && r.rare.status != nil }

// Pod is the pod as Slim cut it (the container statuses only when they
// hold a failure Detect finds). Each call returns a new pod.
func (r *Record) Pod() *corev1.Pod {
	pod := &corev1.Pod{}
	if err := pod.Unmarshal([]byte(r.shared.Value())); err != nil {
		// Compact encoded it; a failure here is a bug, not input.
		panic(fmt.Sprintf("decode cached pod %s/%s: %v", r.namespace.Value(), r.name, err))
	}
	pod.TypeMeta = metav1.TypeMeta{}
	pod.Name, pod.Namespace, pod.UID, pod.ResourceVersion = r.name, r.namespace.Value(), r.UID(), r.resourceVersion
	if r.created != zeroTime {
		pod.CreationTimestamp = metav1.Unix(r.created, 0)
	}
	pod.Spec.NodeName = r.nodeName.Value()
	if r.phase != otherPhase {
		pod.Status.Phase = phases[r.phase]
	}
	if x := r.rare; x != nil {
		pod.DeletionTimestamp = x.deleting
		if r.phase == otherPhase {
			pod.Status.Phase = x.phase
		}
		if x.status != nil {
			pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = x.status.InitContainerStatuses, x.status.ContainerStatuses
		}
	}
	return pod
}
