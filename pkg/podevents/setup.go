package podevents

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Options configures Setup.
type Options struct {
	// MaxPods bounds the pod UIDs remembered (DefaultMaxPods when 0).
	MaxPods int
	// Explain, when set, gives the readable decision line of a decided
	// pod for its IsamatchDecided Event (the pod stores only the numbers;
	// see contract.DecisionCounts). The webhook passes
	// mutate.PodMutator.Explain. It runs on ExplainWorkers goroutines,
	// off the informer's, with ExplainBudget each.
	Explain Explainer
	// QPS and Burst pace the Events (a Pacer; DefaultQPS and DefaultBurst
	// when 0).
	QPS   float64
	Burst int
	// Metrics, when set, counts the Events waiting and dropped.
	Metrics *Metrics
}

// Setup adds to mgr, on the elected leader only, the handler of the pod
// informer's events that records the Events of decided pods. The
// manager's cache should hold unscheduled pods only, as the gate
// controller's does: decided pods are reported when they appear in it.
func Setup(mgr manager.Manager, o Options) error {
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	w := NewWriter(mgr.GetClient(), mgr.GetScheme(), ReportingController, o.Metrics, mgr.GetLogger().WithName("podevents"))
	p, err := NewPacer(w, o.QPS, o.Burst, QueueLen, o.Metrics)
	if err != nil {
		return err
	}
	r := NewReporter(p, o.MaxPods)
	if err := mgr.Add(&runner{informers: mgr.GetCache(), reporter: r, pacer: p, explain: o.Explain, log: mgr.GetLogger().WithName("podevents")}); err != nil {
		return fmt.Errorf("set up pod events: %w", err)
	}
	return nil
}

// runner adds the handler to the pod informer while it runs.
type runner struct {
	informers cache.Informers
	reporter  *Reporter
	pacer     *Pacer
	explain   Explainer
	log       logr.Logger
}

var _ manager.LeaderElectionRunnable = (*runner)(nil)

// NeedLeaderElection: one replica reports, or each pod would get the
// Events once per replica.
func (*runner) NeedLeaderElection() bool { return true }

// Start adds the handler and removes it when ctx ends. The informer
// replays the pods it holds to the new handler: the pending ones a former
// leader reported are reported again.
func (r *runner) Start(ctx context.Context) error {
	inf, err := r.informers.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	go r.pacer.Run(ctx)
	if r.explain != nil {
		r.reporter.Explain(ctx, r.explain)
	}
	reg, err := inf.AddEventHandler(Handler(r.reporter, r.log))
	if err != nil {
		return fmt.Errorf("add pod event handler: %w", err)
	}
	<-ctx.Done()
	_ = inf.RemoveEventHandler(reg) // the informer stops with the manager anyway
	return nil
}

// Handler is the pod informer's event handler: decided pods added or
// updated are reported (Reporter.Observe), those that leave the informer
// (scheduled, out of its selector, or deleted) forgotten.
func Handler(r *Reporter, log logr.Logger) toolscache.ResourceEventHandler {
	observe := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && r.Observe(pod) {
			log.V(1).Info("decision events recorded", "pod", klog.KObj(pod))
		}
	}
	return toolscache.FilteringResourceEventHandler{
		FilterFunc: decided,
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj any) { observe(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if pod, ok := obj.(*corev1.Pod); ok {
					r.Forget(pod)
				}
			},
		},
	}
}

// decided reports whether obj is a pod the webhook decided; a tombstone of
// one passes too, so that it is forgotten.
func decided(obj any) bool {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	if _, ok := pod.Annotations[isa.DecisionAnnotation]; ok {
		return true
	}
	_, ok = pod.Annotations[isa.DecisionCountsAnnotation] // the earlier format
	return ok
}
