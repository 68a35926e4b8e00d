package watch

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/misplace"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// EventRecorder records Events (events.k8s.io/v1); controller-runtime's
// manager.GetEventRecorder returns one.
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Event reasons on a misplaced pod.
const (
	// ReasonMisplaced: a container died of its node's ISA (Warning).
	ReasonMisplaced = "IsamatchMisplaced"
	// ReasonEvicted: the remedy evicted the pod (Normal).
	ReasonEvicted = "IsamatchEvicted"
)

// ReportingController names the Events' source.
const ReportingController = "isamatch-misplacement"

// DefaultMaxSeen bounds the containers a Watcher remembers reporting.
const DefaultMaxSeen = 65536

// DefaultEvictGrace is WatcherOptions.EvictGrace's default.
const DefaultEvictGrace = time.Minute

// Watcher records the runtime misplacements of the pods it observes, once
// per pod and container, and evicts them when Evictor is set. Build it with
// NewWatcher; it is safe for concurrent use.
type Watcher struct {
	rec     EventRecorder
	nodes   client.Reader
	metrics *Metrics
	evictor Evictor
	keys    engine.KeyOptions
	seen    *lru.Cache
	owners  *backoff
	now     func() time.Time
	// graceEnd is when the remedy may evict: EvictGrace after the
	// Watcher was built.
	graceEnd time.Time
}

// WatcherOptions configures NewWatcher.
type WatcherOptions struct {
	// Recorder records the Events.
	Recorder EventRecorder
	// Nodes reads the failing pod's Node (its metadata only) for its
	// labels: the manager's cache, whose node informer the inventory
	// already runs.
	Nodes   client.Reader
	Metrics *Metrics
	// Evictor, when set, is the remedy: misplaced pods isamatch did not
	// decide and a controller replaces are evicted through it.
	Evictor Evictor
	// EvictGrace is how long after the Watcher is built (the webhook
	// started) the remedy waits before its first eviction: until then the
	// API server may not reach the webhook yet (its Service's endpoints,
	// kube-proxy), and a replacement would be admitted undecided again.
	// DefaultEvictGrace when 0; none when negative.
	EvictGrace time.Duration
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
	// MaxSeen bounds the containers remembered (DefaultMaxSeen when 0).
	MaxSeen int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewWatcher returns a Watcher.
func NewWatcher(o WatcherOptions) *Watcher {
	if o.MaxSeen <= 0 {
		o.MaxSeen = DefaultMaxSeen
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EvictGrace == 0 {
		o.EvictGrace = DefaultEvictGrace
	}
	return &Watcher{rec: o.Recorder, nodes: o.Nodes, metrics: o.Metrics, evictor: o.Evictor, keys: o.Keys, seen: lru.New(o.MaxSeen), owners: newBackoff(o.Now),
		now: o.Now, graceEnd: o.Now().Add(max(o.EvictGrace, 0))}
}

// seenKey identifies one failure of one pod's container; an eviction
// scheduled for a pod is remembered under its UID and reason "evict".
type seenKey struct {
	uid       string
	container string
	reason    string
}

// Observe records pod's new misplacements and returns how many it
// recorded. A pod being deleted is left alone.
func (w *Watcher) Observe(ctx context.Context, pod *corev1.Pod) int {
	if pod.UID == "" || pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
		return 0
	}
	failures := misplace.Detect(pod)
	if len(failures) > 0 && w.evictor != nil {
		defer w.evict(ctx, pod)
	}
	var fresh []misplace.Failure
	for _, f := range failures {
		k := seenKey{string(pod.UID), f.Container, f.Reason}
		if _, ok := w.seen.Get(k); ok {
			continue
		}
		w.seen.Add(k, struct{}{})
		fresh = append(fresh, f)
	}
	if len(fresh) == 0 {
		return 0
	}
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	node := w.nodeISA(ctx, pod.Spec.NodeName)
	needs := misplace.PodNeeds(pod, w.keys)
	for _, f := range fresh {
		w.metrics.misplaced(f.Reason)
		w.rec.Eventf(containerRef(pod, f), nil, corev1.EventTypeWarning, ReasonMisplaced, "Detect", "%s", misplace.Note(f, pod.Spec.NodeName, node, needs))
		log.Info("misplaced pod", "container", f.Container, "reason", f.Reason)
	}
	return len(fresh)
}

// Forget drops what was remembered of pod: it was deleted.
func (w *Watcher) Forget(pod *corev1.Pod) {
	for _, c := range pod.Spec.InitContainers {
		w.forget(pod, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		w.forget(pod, c.Name)
	}
}

func (w *Watcher) forget(pod *corev1.Pod, container string) {
	for _, r := range []string{misplace.ReasonSIGILL, misplace.ReasonExecFormat} {
		w.seen.Remove(seenKey{string(pod.UID), container, r})
	}
}

// nodeISA describes node name's ISA from its labels.
func (w *Watcher) nodeISA(ctx context.Context, name string) string {
	if w.nodes == nil {
		return "unknown"
	}
	n := &metav1.PartialObjectMetadata{}
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	if err := w.nodes.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		return "unknown (" + sanitize.Line(err.Error(), 96) + ")"
	}
	return misplace.NodeISA(n.Labels, n.Annotations)
}

// evict is the remedy: pod is evicted when evictable and its controller
// had no pod evicted within EvictBackoff; within the grace, once, when the
// grace ends.
func (w *Watcher) evict(ctx context.Context, pod *corev1.Pod) {
	owner, ok := evictable(pod)
	if !ok {
		return
	}
	if wait := w.graceEnd.Sub(w.now()); wait > 0 {
		k := seenKey{string(pod.UID), "", "evict"}
		if _, ok := w.seen.Get(k); !ok {
			w.seen.Add(k, struct{}{})
			pod := pod.DeepCopy()
			time.AfterFunc(wait, func() { w.evictNow(ctx, pod, owner) })
		}
		return
	}
	w.evictNow(ctx, pod, owner)
}

// evictNow evicts pod unless its controller had a pod evicted within
// EvictBackoff.
func (w *Watcher) evictNow(ctx context.Context, pod *corev1.Pod, owner types.UID) {
	if ctx.Err() != nil || !w.owners.take(owner) {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KObj(pod))
	err := w.evictor.Evict(ctx, pod)
	switch {
	case err == nil:
		w.metrics.evicted("evicted")
		w.rec.Eventf(podRef(pod), nil, corev1.EventTypeNormal, ReasonEvicted, "Evict", "%s",
			"evicted: isamatch did not decide this pod and it died of its node's instruction set; its controller's replacement is admitted with isamatch's decision")
		log.Info("evicted misplaced pod")
	case apierrors.IsTooManyRequests(err) || apierrors.IsForbidden(err) || apierrors.IsConflict(err):
		w.metrics.evicted("refused")
		log.Info("eviction refused", "error", err.Error())
	case apierrors.IsNotFound(err):
	default:
		w.metrics.evicted("error")
		log.Error(err, "eviction failed")
	}
}

// containerRef is the Event's object: the failed container, as the
// kubelet's Events on a container name it.
func containerRef(pod *corev1.Pod, f misplace.Failure) *corev1.ObjectReference {
	ref := podRef(pod)
	if f.Init {
		ref.FieldPath = "spec.initContainers{" + f.Container + "}"
	} else {
		ref.FieldPath = "spec.containers{" + f.Container + "}"
	}
	return ref
}

func podRef(pod *corev1.Pod) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}
