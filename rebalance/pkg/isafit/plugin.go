package isafit

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
)

// PluginName is the name the policy enables the plugin by.
const PluginName = "ISAFit"

// ISAFit is the descheduler Balance plugin that moves pods to nodes of a
// better isamatch tier. Its reservations last as long as the plugin: the
// rebalancer runs every cycle as a descheduler run of its own, which builds
// the profiles afresh, so they hold within one cycle, not into the next.
type ISAFit struct {
	handle frameworktypes.Handle
	args   *ISAFitArgs
	filter podutil.FilterFunc
	// targets admits the nodes a pod may be moved to (targetNodeSelector).
	targets labels.Selector
	budget  *budget.Ledger
	res     reservations
	// now and sleep are time.Now and a context-aware sleep; tests replace them.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

var _ frameworktypes.BalancePlugin = (*ISAFit)(nil)

// Register adds the plugin to a descheduler plugin registry; every
// instance counts its evictions in b, the per-namespace budget the
// rebalancer's plugins share (nil: no budget).
func Register(r pluginregistry.Registry, b *budget.Ledger) {
	pluginregistry.Register(PluginName, Builder(b), &ISAFit{}, &ISAFitArgs{}, ValidateISAFitArgs, SetDefaultsISAFitArgs, r)
}

// Builder returns the plugin's builder with the eviction budget b.
func Builder(b *budget.Ledger) pluginregistry.PluginBuilder {
	return func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		p, err := New(ctx, args, handle)
		if err != nil {
			return nil, err
		}
		p.(*ISAFit).budget = b
		return p, nil
	}
}

// New builds the plugin from its arguments (already defaulted and
// validated by descheduler), without an eviction budget.
func New(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
	a, ok := args.(*ISAFitArgs)
	if !ok {
		return nil, fmt.Errorf("%s: want args of type ISAFitArgs, got %T", PluginName, args)
	}
	filter, err := podscope.Filter(PluginName, handle, a.Namespaces, a.LabelSelector)
	if err != nil {
		return nil, err
	}
	targets := labels.Everything()
	if a.TargetNodeSelector != nil {
		if targets, err = metav1.LabelSelectorAsSelector(a.TargetNodeSelector); err != nil {
			return nil, fmt.Errorf("%s: targetNodeSelector: %w", PluginName, err)
		}
	}
	return &ISAFit{handle: handle, args: a, filter: filter, targets: targets, now: time.Now, sleep: sleepCtx}, nil
}

// Name implements frameworktypes.Plugin.
func (d *ISAFit) Name() string { return PluginName }

// Balance evicts, one at a time and best gain first, the pods a node of a
// better isamatch tier can take now, within the per-cycle and per-node
// limits. Each eviction goes through descheduler's evictor (the Eviction
// API, so PodDisruptionBudgets hold) and reserves room on the target until
// the replacement pod is bound; the next move is planned against that.
func (d *ISAFit) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	log := klog.FromContext(ctx).WithValues("plugin", PluginName)
	start := d.now()
	deadline := start.Add(d.args.DisruptionWait.Duration)
	perNode := map[string]int{}
	skipped := map[types.UID]bool{} // refused or filtered out, for this cycle
	refused := map[types.UID]bool{} // refused since the last wait
	evicted := 0
	var last planStats
	for evicted < d.args.MaxEvictionsPerCycle {
		now := d.now()
		if err := d.res.retire(now, d.listNamespace); err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: %w", PluginName, err)}
		}
		moves, st, err := planMoves(ctx, nodes, d.res.wrap(d.handle.GetPodsAssignedToNodeFunc()), planOptions{
			filter:  d.filter,
			skip:    func(p *v1.Pod) bool { return skipped[p.UID] || refused[p.UID] || d.res.reserved(p) },
			minAge:  d.args.MinPodAge.Duration,
			minGain: d.args.MinWeightGain,
			targets: d.targets,
			now:     now,
		})
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: %w", PluginName, err)}
		}
		last = st
		m, ok := firstAllowed(moves, perNode, d.args.MaxEvictionsPerNode)
		if !ok {
			if len(refused) > 0 && now.Before(deadline) {
				// Every remaining move was refused (a budget allows no
				// disruption now): wait for replacements to become ready.
				if err := d.sleep(ctx, d.args.RetryInterval.Duration); err != nil {
					break
				}
				clear(refused)
				continue
			}
			break
		}
		if !d.handle.Evictor().PreEvictionFilter(m.pod) {
			skipped[m.pod.UID] = true
			continue
		}
		if !d.budget.Allow(m.pod.Namespace) {
			skipped[m.pod.UID] = true
			log.V(1).Info("Namespace eviction budget spent", "pod", klog.KObj(m.pod), "budget", d.budget.Max())
			continue
		}
		live, err := d.liveOf(m.pod)
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: %w", PluginName, err)}
		}
		err = d.handle.Evictor().Evict(ctx, m.pod, evictions.EvictOptions{
			StrategyName: PluginName,
			Reason:       fmt.Sprintf("node %s is a better isamatch tier (weight %d, here %d) and has room", m.to, m.toWeight, m.fromWeight),
		})
		var nodeLimit *evictions.EvictionNodeLimitError
		var totalLimit *evictions.EvictionTotalLimitError
		switch {
		case err == nil:
			evicted++
			perNode[m.from]++
			d.budget.Record(m.pod.Namespace)
			d.res.add(m.pod, m.to, live, d.now())
			log.V(1).Info("Evicted pod for a better ISA tier", "pod", klog.KObj(m.pod), "node", m.from, "target", m.to, "weight", m.fromWeight, "targetWeight", m.toWeight)
		case errors.As(err, &nodeLimit):
			perNode[m.from] = max(d.args.MaxEvictionsPerNode, perNode[m.from]+1)
		case errors.As(err, &totalLimit):
			return nil
		case d.now().Before(deadline):
			refused[m.pod.UID] = true
			log.V(1).Info("Eviction refused; retrying later in this cycle", "pod", klog.KObj(m.pod), "err", err.Error())
		default:
			skipped[m.pod.UID] = true
			log.V(1).Info("Eviction refused", "pod", klog.KObj(m.pod), "err", err.Error())
		}
	}
	// movable and tooYoung are what the last plan saw: pods with tiers
	// that could be moved, and those younger than minPodAge.
	log.V(1).Info("Cycle done", "evicted", evicted, "movable", last.tiered, "tooYoung", last.young, "minPodAge", d.args.MinPodAge.Duration.String(), "seconds", d.now().Sub(start).Seconds())
	return nil
}

// firstAllowed returns the first move whose source node is under its limit.
func firstAllowed(moves []move, perNode map[string]int, limit int) (move, bool) {
	for _, m := range moves {
		if perNode[m.from] < limit {
			return m, true
		}
	}
	return move{}, false
}

func (d *ISAFit) listNamespace(ns string) ([]*v1.Pod, error) {
	return d.handle.SharedInformerFactory().Core().V1().Pods().Lister().Pods(ns).List(labels.Everything())
}

// liveOf is the live count of the pod's owner before its eviction.
func (d *ISAFit) liveOf(pod *v1.Pod) (int, error) {
	owner := controllerUID(pod)
	if owner == "" {
		return 0, nil
	}
	pods, err := d.listNamespace(pod.Namespace)
	if err != nil {
		return 0, fmt.Errorf("list pods in %s: %w", pod.Namespace, err)
	}
	return liveCount(pods, owner), nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
