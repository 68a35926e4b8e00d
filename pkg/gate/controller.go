package gate

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
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
)

// Event reasons on the pod.
const (
	ReasonReleased = "IsamatchReleased"
	ReasonTimeout  = "IsamatchGateTimeout"
	ReasonNarrowed = "IsamatchNarrowed"
	ReasonDenied   = "IsamatchDenied"
	ReasonRefused  = "IsamatchRefused"
)

// Reconciler releases one gated pod per call.
type Reconciler struct {
	Client   client.Client
	Releaser Releaser
	Recorder events.EventRecorder
	Metrics  *Metrics
	// Timeout bounds how long a pod stays gated, from its creation.
	Timeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Options configures Setup.
type Options struct {
	Timeout time.Duration
	Workers int
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
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Releaser: rel,
		Recorder: mgr.GetEventRecorder("isamatch-gate"),
		Metrics:  o.Metrics,
		Timeout:  o.Timeout,
	}
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && mutate.HasGate(pod.Spec.SchedulingGates)
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

// Reconcile releases the pod if it still carries the gate: it resolves its
// images until the pod's bound (creation + Timeout), or answers from the
// cache alone past it, and writes the result with the gate removed in one
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
	if !mutate.HasGate(pod.Spec.SchedulingGates) || pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	deadline := pod.CreationTimestamp.Add(r.Timeout)
	resolve := r.now().Before(deadline)
	rctx := ctx
	if resolve {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	next := pod.DeepCopy()
	rel := r.Releaser.ReleaseGated(rctx, next, resolve)
	err := r.Client.Patch(ctx, next, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	case apierrors.IsInvalid(err):
		// The API server refused the affinity: never hold the pod for it.
		log.Info("affinity refused, releasing the pod without it", "error", err.Error())
		return reconcile.Result{}, r.releaseBare(ctx, pod, err)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("release pod: %w", err)
	}
	r.Metrics.released(rel.Reason, r.now().Sub(pod.CreationTimestamp.Time).Seconds())
	r.event(next, rel)
	log.V(1).Info("released", "reason", rel.Reason)
	return reconcile.Result{}, nil
}

// event records rel on pod.
func (r *Reconciler) event(pod *corev1.Pod, rel mutate.GateRelease) {
	reason, kind := ReasonReleased, corev1.EventTypeNormal
	switch {
	case rel.Reason == mutate.ReleaseTimeout:
		reason, kind = ReasonTimeout, corev1.EventTypeWarning
	case rel.Reason == mutate.ReleaseDenied:
		reason, kind = ReasonDenied, corev1.EventTypeWarning
	case rel.Warning:
		reason, kind = ReasonNarrowed, corev1.EventTypeWarning
	}
	r.Recorder.Eventf(pod, nil, kind, reason, "Release", "%s", rel.Message)
}

// releaseBare removes only the gate, with a decision annotation and a
// warning saying why.
func (r *Reconciler) releaseBare(ctx context.Context, pod *corev1.Pod, cause error) error {
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
	next.Annotations[isa.DecisionAnnotation] = msg
	if err := r.Client.Patch(ctx, next, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("release pod without affinity: %w", err)
	}
	r.Metrics.released("refused", r.now().Sub(pod.CreationTimestamp.Time).Seconds())
	r.Recorder.Eventf(next, nil, corev1.EventTypeWarning, ReasonRefused, "Release", "%s: %s", msg, cause.Error())
	return nil
}
