package gate

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/gate/release"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Releaser decides for a gated pod and writes the result in it
// (mutate.PodMutator).
type Releaser interface {
	ReleaseGated(ctx context.Context, pod *corev1.Pod, resolve bool) mutate.GateRelease
}

var _ Releaser = (*mutate.PodMutator)(nil)

// Defaults.
const (
	// DefaultTimeout bounds how long a pod stays gated: well past a
	// registry's usual answer (its fetches time out at 15s each, but
	// admission's own budget is 8s), well under the minute a user waits
	// before looking at a Pending pod.
	DefaultTimeout = 20 * time.Second
	// DefaultWorkers is how many gated pods are decided at once. Their
	// registry work is bounded again by the resolver (per host, per
	// namespace, in all), and pods of one image share one lookup.
	DefaultWorkers = 16
	// DefaultAttempt bounds how long one reconcile waits for a pod's
	// images: a healthy registry answers well within it; a slow one keeps
	// resolving in the background (the resolver's shared flight, cached)
	// while the worker moves on, and a later attempt picks the result up.
	DefaultAttempt = 2 * time.Second
	// DefaultRetry is the delay before a pod is tried again after an
	// attempt that ended with images pending, or when its namespace had
	// its share of the workers.
	DefaultRetry = 250 * time.Millisecond
)

// DefaultWorkersPerNamespace is the share of workers one namespace's pods
// may hold at once: a quarter, so a namespace flooding gated pods of slow
// registries leaves three quarters to every other namespace.
func DefaultWorkersPerNamespace(workers int) int {
	return max(1, workers/4)
}

// Reconciler releases one gated pod per call. Its zero limits (Attempt,
// PerNamespace) mean none; Setup sets the defaults.
type Reconciler struct {
	Client   client.Client
	Releaser Releaser
	Recorder events.EventRecorder
	Metrics  *Metrics
	// Timeout bounds how long a pod stays gated, from its creation.
	Timeout time.Duration
	// Attempt bounds how long one call waits for a pod's images before it
	// gives the worker back and asks to be called again.
	Attempt time.Duration
	// Retry is the delay before that call (DefaultRetry when 0).
	Retry time.Duration
	// PerNamespace bounds the calls of one namespace waiting for images
	// at once; a pod of a namespace at its bound is tried again later.
	PerNamespace int
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	sharesOnce sync.Once
	shares     *shares
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Options configures Setup.
type Options struct {
	Timeout time.Duration
	Workers int
	// WorkersPerNamespace is DefaultWorkersPerNamespace(Workers) when 0.
	WorkersPerNamespace int
	// Attempt is DefaultAttempt when 0.
	Attempt time.Duration
	Metrics *Metrics
}

// Setup adds the controller to mgr: it watches pods that carry
// isa.ResolveGate and runs on the elected leader only. The manager's cache
// should hold unscheduled pods only (see CacheByObject).
func Setup(mgr manager.Manager, rel Releaser, o Options) error {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.WorkersPerNamespace <= 0 {
		o.WorkersPerNamespace = DefaultWorkersPerNamespace(o.Workers)
	}
	if o.Attempt <= 0 {
		o.Attempt = DefaultAttempt
	}
	r := &Reconciler{
		Client:       mgr.GetClient(),
		Releaser:     rel,
		Recorder:     mgr.GetEventRecorder("isamatch-gate"),
		Metrics:      o.Metrics,
		Timeout:      o.Timeout,
		Attempt:      o.Attempt,
		Retry:        DefaultRetry,
		PerNamespace: o.WorkersPerNamespace,
	}
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && engine.HasGate(pod.Spec.SchedulingGates)
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("isamatch-gate").
		For(&corev1.Pod{}, builder.WithPredicates(gated)).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up gate controller: %w", err)
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile releases the pod if it still carries the gate. Within the
// pod's bound (creation + Timeout) it resolves the pod's images for at most
// Attempt, and only if the pod's namespace has fewer than PerNamespace
// calls doing so; otherwise, or if the images are still being looked up
// when the attempt ends, it asks to be called again after Retry (never
// past the bound) and the lookups go on in the resolver, whose cached
// result a later call reads. So no namespace and no slow registry holds
// the workers. At the bound the pod is released with what the cache holds,
// without waiting. The release is written with the gate removed in one
// patch that fails if the pod changed since it was read (then the next
// call reads it again). A pod without the gate (released, or its gate
// removed by someone else), deleted or being deleted is left alone.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KRef(req.Namespace, req.Name))
	ctx = ctrl.LoggerInto(ctx, log)
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !engine.HasGate(pod.Spec.SchedulingGates) || pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	now := r.now()
	deadline := pod.CreationTimestamp.Add(r.Timeout)
	left := deadline.Sub(now)
	if left <= 0 {
		return reconcile.Result{}, r.releaseCached(ctx, pod)
	}
	done, ok := r.namespaceShares().tryAcquire(pod.Namespace)
	if !ok {
		r.Metrics.deferred(DeferredNamespaceBusy)
		return r.retry(left), nil
	}
	wait, last := left, true
	if r.Attempt > 0 && r.Attempt < left {
		wait, last = r.Attempt, false
	}
	next := pod.DeepCopy()
	rel := func() mutate.GateRelease {
		defer done() // even if the releaser panics: the share is never lost
		actx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return r.Releaser.ReleaseGated(actx, next, true)
	}()
	if rel.Pending {
		if last {
			return reconcile.Result{}, r.releaseCached(ctx, pod)
		}
		r.Metrics.deferred(DeferredPending)
		return r.retry(deadline.Sub(r.now())), nil
	}
	return reconcile.Result{}, r.write(ctx, pod, next, rel)
}

// namespaceShares returns the calls in progress per namespace.
func (r *Reconciler) namespaceShares() *shares {
	r.sharesOnce.Do(func() { r.shares = newShares(r.PerNamespace) })
	return r.shares
}

// retry asks for the next call after Retry, or at the bound, left from
// now, if that comes first.
func (r *Reconciler) retry(left time.Duration) reconcile.Result {
	d := r.Retry
	if d <= 0 {
		d = DefaultRetry
	}
	return reconcile.Result{RequeueAfter: max(min(d, left), time.Millisecond)}
}

// releaseCached releases pod past its bound with what the cache holds: it
// never waits for a registry.
func (r *Reconciler) releaseCached(ctx context.Context, pod *corev1.Pod) error {
	next := pod.DeepCopy()
	return r.write(ctx, pod, next, r.Releaser.ReleaseGated(ctx, next, false))
}

// write patches pod into next, the release rel, and records it, with the
// Writer kubectl isa ungate uses too.
func (r *Reconciler) write(ctx context.Context, pod, next *corev1.Pod, rel mutate.GateRelease) error {
	w := release.Writer{Patch: r.patch, Recorder: r.Recorder, Released: r.Metrics.released, Now: r.Now}
	return w.Write(ctx, pod, next, rel)
}

// patch writes next over pod with the pod's resourceVersion as the lock.
func (r *Reconciler) patch(ctx context.Context, pod, next *corev1.Pod) error {
	return r.Client.Patch(ctx, next, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
}
