package watch

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/misplace"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Options configures Setup.
type Options struct {
	// Events turns the watcher on: Events and
	// isamatch_runtime_misplacements_total. Off, the informer still runs
	// for the audit.
	Events bool
	// Evict turns the remedy on (needs create on pods/eviction).
	Evict bool
	// EvictGrace is WatcherOptions.EvictGrace (0: DefaultEvictGrace,
	// negative: none).
	EvictGrace time.Duration
	Metrics    *Metrics
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
}

// Runner runs the informer of scheduled pods on the elected leader and
// feeds the Watcher. Its Pods are what the audit reads (package
// pkg/audit/scanner).
type Runner struct {
	informer toolscache.SharedIndexInformer
	watcher  *Watcher
	log      logr.Logger
}

var _ manager.LeaderElectionRunnable = (*Runner)(nil)

// Setup adds the Runner to mgr and returns it. The informer lists and
// watches pods bound to a node (spec.nodeName != ""), cut by
// misplace.Slim and stored as a misplace.Record, and starts only on the
// elected leader.
func Setup(mgr manager.Manager, o Options) (*Runner, error) {
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("misplacement clientset: %w", err)
	}
	r := NewRunner(cs, nil, mgr.GetLogger().WithName("misplacement"))
	if o.Events {
		wo := WatcherOptions{Recorder: mgr.GetEventRecorder(ReportingController), Nodes: mgr.GetCache(), Metrics: o.Metrics, Keys: o.Keys, EvictGrace: o.EvictGrace}
		if o.Evict {
			wo.Evictor = ClientEvictor(mgr.GetClient())
		}
		r.watcher = NewWatcher(wo)
	}
	if err := mgr.Add(r); err != nil {
		return nil, fmt.Errorf("add misplacement watcher: %w", err)
	}
	return r, nil
}

// NewRunner returns a Runner over cs's scheduled pods that reports to w
// (nil: the informer only).
func NewRunner(cs kubernetes.Interface, w *Watcher, log logr.Logger) *Runner {
	bound := fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = bound
			return cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (apiwatch.Interface, error) {
			o.FieldSelector = bound
			return cs.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})
	_ = inf.SetTransform(misplace.Compact) // cannot fail before Run
	return &Runner{informer: inf, watcher: w, log: log}
}

// NeedLeaderElection: one replica watches, or each would record the
// Events and evict.
func (*Runner) NeedLeaderElection() bool { return true }

// Start runs the informer until ctx ends.
func (r *Runner) Start(ctx context.Context) error {
	if r.watcher != nil {
		ctx := ctrl.LoggerInto(ctx, r.log)
		observe := func(obj any) {
			// A record without failures would give Observe nothing to do.
			if rec, ok := obj.(*misplace.Record); ok && rec.Failed() {
				r.watcher.Observe(ctx, rec.Pod())
			}
		}
		_, err := r.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj any) { observe(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if rec, ok := obj.(*misplace.Record); ok {
					r.watcher.Forget(rec.Pod())
				}
			},
		})
		if err != nil {
			return fmt.Errorf("add misplacement handler: %w", err)
		}
	}
	r.informer.RunWithContext(ctx)
	return nil
}

// HasSynced reports whether the informer has listed every scheduled pod.
func (r *Runner) HasSynced() bool { return r.informer.HasSynced() }

// Pods yields the scheduled pods the informer holds, as misplace.Slim
// cuts them (Record.Pod), each built when it is yielded: the cache holds
// records, not pods.
func (r *Runner) Pods() iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		for _, o := range r.informer.GetStore().List() {
			if rec, ok := o.(*misplace.Record); ok && !yield(rec.Pod()) {
				return
			}
		}
	}
}
