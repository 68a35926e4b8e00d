package labeler

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

// ProbeFunc probes the host; the labeler passes a closure over probe.Probe.
type ProbeFunc func(ctx context.Context) (probe.Result, error)

// Controller keeps one Node labelled. It re-probes the host when its last
// probe is older than Interval and reconciles whenever the Node's labels or
// annotations change, so a removed label is put back.
type Controller struct {
	Client   NodeClient
	NodeName string
	Probe    ProbeFunc
	Interval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Recorder, when set, gets an Event on the Node for every change of
	// its labels or annotations and for every failed probe.
	Recorder EventRecorder
	// Metrics, when set, observes probes and the keys written.
	Metrics *Metrics
	// AfterPass, when set, is called at the end of every Reconcile. The
	// daemon sets debug.FreeOSMemory: it idles for Interval between
	// passes, and a pass (host commands, their output, the patch) leaves
	// freed heap the runtime would otherwise keep resident for minutes.
	AfterPass func()

	mu     sync.Mutex
	last   probe.Result
	lastAt time.Time
	have   bool
}

var _ reconcile.Reconciler = (*Controller)(nil)

// SetupWithManager registers the controller. The manager's cache must be
// restricted to the one Node (cache.Options.ByObject with a metadata.name
// field selector) so the labeler never lists the whole cluster's nodes.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("isamatch-labeler").
		For(&corev1.Node{}, builder.WithPredicates(predicate.Or(
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Complete(c)
}

// Reconcile implements reconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != c.NodeName {
		return reconcile.Result{}, nil
	}
	if c.AfterPass != nil {
		defer c.AfterPass()
	}
	log := ctrl.LoggerFrom(ctx).WithValues("node", c.NodeName)
	res, next, err := c.current(ctx)
	if err != nil {
		if c.Recorder != nil {
			c.Recorder.Eventf(nodeRef(c.NodeName), nil, corev1.EventTypeWarning, ReasonProbeFailed, "Probe",
				"%s", truncate("probe failed, labels left as they were: "+err.Error(), maxNote))
		}
		return reconcile.Result{}, fmt.Errorf("probe host: %w", err)
	}
	out, err := Reconcile(ctx, c.Client, c.NodeName, Desired{Labels: isa.WithGroupDomain(res.Labels(), c.NodeName), Annotations: res.Annotations()})
	if apierrors.IsNotFound(err) {
		log.Info("node not found, waiting for it", "retryIn", next)
		return reconcile.Result{RequeueAfter: next}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if out.Patched {
		c.Metrics.written(out)
		log.Info("node labels reconciled", "set", out.Set, "deleted", out.Deleted, "isa", res.Native.Short(),
			"added", out.Added, "changed", out.Changed, "removed", out.Removed)
		if c.Recorder != nil {
			c.Recorder.Eventf(out.Node, nil, corev1.EventTypeNormal, ReasonLabelsChanged, "Label",
				"%s", changeNote(out, res.NativeSource, res.EmuSource))
		}
	} else {
		log.V(1).Info("node labels up to date")
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// current returns the cached probe result, re-probing when it is older than
// the interval, and how long until the next probe is due.
func (c *Controller) current(ctx context.Context) (probe.Result, time.Duration, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	interval := c.Interval
	if interval <= 0 {
		interval = 10 * time.Minute
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := now()
	if !c.have || t.Sub(c.lastAt) >= interval {
		start := time.Now()
		res, err := c.Probe(ctx)
		c.Metrics.probed(time.Since(start).Seconds(), res, err)
		if err != nil {
			return probe.Result{}, 0, err
		}
		if c.have && res.NativeSource != c.last.NativeSource {
			ctrl.LoggerFrom(ctx).Info("host ISA changed", "node", c.NodeName, "isa", res.Native.Short())
		}
		var prev *probe.Result
		if c.have {
			prev = &c.last
		}
		c.reportEmulation(ctx, prev, res)
		c.last, c.lastAt, c.have = res, t, true
	}
	return c.last, interval - t.Sub(c.lastAt), nil
}
