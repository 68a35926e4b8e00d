package weightedload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/isafit"
	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// PluginName is the name the policy enables the plugin by.
const PluginName = "WeightedLoad"

// WeightedLoad is the descheduler Balance plugin that moves pods off nodes
// loaded above the cluster's size-weighted average.
type WeightedLoad struct {
	handle frameworktypes.Handle
	args   *WeightedLoadArgs
	filter podutil.FilterFunc
	deps   Deps
}

var _ frameworktypes.BalancePlugin = (*WeightedLoad)(nil)

// Deps are what the rebalancer process gives every instance of the plugin.
type Deps struct {
	// Budget is the per-namespace eviction budget the rebalancer's plugins
	// share across cycles; nil means none.
	Budget *budget.Ledger
	// Metrics is a Metrics API client, read with usage: metrics; nil
	// leaves CPU and memory to requests.
	Metrics metricsclient.Interface
	// Observer receives each cycle's view; nil drops it.
	Observer Observer
}

// Register adds the plugin to a descheduler plugin registry, its instances
// built with deps.
func Register(r pluginregistry.Registry, deps Deps) {
	pluginregistry.Register(PluginName, Builder(deps), &WeightedLoad{}, &WeightedLoadArgs{}, ValidateWeightedLoadArgs, SetDefaultsWeightedLoadArgs, r)
}

// Builder returns the plugin's builder with deps.
func Builder(deps Deps) pluginregistry.PluginBuilder {
	return func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		p, err := New(ctx, args, handle)
		if err != nil {
			return nil, err
		}
		p.(*WeightedLoad).deps = deps
		return p, nil
	}
}

// New builds the plugin from its arguments (already defaulted and
// validated by descheduler), without Deps.
func New(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
	a, ok := args.(*WeightedLoadArgs)
	if !ok {
		return nil, fmt.Errorf("%s: want args of type WeightedLoadArgs, got %T", PluginName, args)
	}
	filter, err := podscope.Filter(PluginName, handle, a.Namespaces, a.LabelSelector)
	if err != nil {
		return nil, err
	}
	return &WeightedLoad{handle: handle, args: a, filter: filter}, nil
}

// Name implements frameworktypes.Plugin.
func (d *WeightedLoad) Name() string { return PluginName }

// Balance measures the nodes, then works through the high-load queue,
// worst node first, evicting from each until it is back within Tolerance
// of the average (see the package documentation for which pods and where
// to).
func (d *WeightedLoad) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	log := klog.FromContext(ctx).WithValues("plugin", PluginName)
	podsOn := d.handle.GetPodsAssignedToNodeFunc()
	weights := d.args.Weights.vec()
	snap := d.read(ctx, weights)
	loads := make([]*load, 0, len(nodes))
	for _, n := range nodes {
		pods, err := podutil.ListPodsOnANode(n.Name, podsOn, nil)
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: list pods on node %s: %w", PluginName, n.Name, err)}
		}
		loads = append(loads, newLoad(n, pods, snap))
	}
	shareZones(loads)
	m := newModel(loads, weights, float64(d.args.Tolerance)/100, float64(d.args.Hysteresis)/100, float64(d.args.HighThreshold)/100)
	v := view(m, loads, snap)
	if d.deps.Observer != nil {
		d.deps.Observer.ObserveCycle(v)
	}
	queue := m.queue(loads)
	log.V(1).Info("Load measured", "usage", d.args.Usage, "sources", sourceNames(v), "failed", v.Failed,
		"averageLoad", v.Load, "balanceIndex", v.Balance, "queued", len(queue))
	use := func(p *v1.Pod) vec { return podUse(p, snap) }
	evicted := 0
	for _, src := range queue {
		pods, err := podutil.ListPodsOnANode(src.node.Name, podsOn, func(p *v1.Pod) bool { return movable(p) && d.filter(p) })
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: list pods on node %s: %w", PluginName, src.node.Name, err)}
		}
		slices.SortFunc(pods, evictionOrder(use))
		perNode := 0
		for _, p := range pods {
			if evicted >= d.args.MaxEvictionsPerCycle {
				return nil
			}
			if perNode >= d.args.MaxEvictionsPerNode || m.settled(src) {
				break
			}
			pu := use(p)
			if !m.helps(src, pu) {
				continue
			}
			t, ok := target(ctx, p, pu, src, loads, m, podsOn)
			if !ok || !d.handle.Evictor().PreEvictionFilter(p) {
				continue
			}
			if !d.deps.Budget.Allow(p.Namespace) {
				log.V(1).Info("Namespace eviction budget spent", "pod", klog.KObj(p), "budget", d.deps.Budget.Max())
				continue
			}
			err := d.handle.Evictor().Evict(ctx, p, evictions.EvictOptions{
				StrategyName: PluginName,
				Reason:       fmt.Sprintf("node %s is above the cluster's size-weighted load by more than %d points; node %s is below it", src.node.Name, d.args.Tolerance, t.node.Name),
			})
			var nodeLimit *evictions.EvictionNodeLimitError
			var totalLimit *evictions.EvictionTotalLimitError
			switch {
			case err == nil:
				evicted++
				perNode++
				d.deps.Budget.Record(p.Namespace)
				src.move(p, pu, t)
				log.V(1).Info("Evicted pod from a loaded node", "pod", klog.KObj(p), "node", src.node.Name, "target", t.node.Name)
			case errors.As(err, &totalLimit):
				return nil
			case errors.As(err, &nodeLimit):
				perNode = d.args.MaxEvictionsPerNode
			default:
				log.V(1).Info("Eviction refused", "pod", klog.KObj(p), "err", err.Error())
			}
		}
	}
	return nil
}

// read is the cycle's usage snapshot: nothing with usage: requests,
// else the dimensions the weights count, from the Metrics API and the
// policy's Prometheus.
func (d *WeightedLoad) read(ctx context.Context, weights vec) usage.Snapshot {
	if d.args.Usage != UsageMetrics {
		return usage.Reader{}.Read(ctx, nil)
	}
	var want []usage.Dimension
	for i, w := range weights {
		if w > 0 {
			want = append(want, usage.Dimensions[i])
		}
	}
	return usage.Reader{Metrics: d.deps.Metrics, Prometheus: d.handle.PrometheusClient(), Queries: d.args.Prometheus}.Read(ctx, want)
}

// sourceNames is, per dimension that counted, its source: one name, or
// "mixed" when some nodes were measured and others judged by requests.
func sourceNames(v CycleView) map[usage.Dimension]string {
	out := map[usage.Dimension]string{}
	for d, by := range v.Sources {
		for s := range by {
			if out[d] == "" {
				out[d] = string(s)
			} else {
				out[d] = "mixed"
			}
		}
	}
	return out
}

// target is the node that takes p (using pu) without going above the
// cluster's load, runs no more of p's siblings than src will
// (spreadAllows), passes the fit check and is of an isamatch tier at
// least as good as p's current node: of those, the one with the lowest
// load (the source's highest score).
func target(ctx context.Context, p *v1.Pod, pu vec, src *load, loads []*load, m *model, podsOn podutil.GetPodsAssignedToNodeFunc) (*load, bool) {
	cur, tiered := isafit.TierWeight(p, src.node)
	var best *load
	for _, t := range loads {
		if t == src || !m.takes(t, src, pu) || !src.spreadAllows(p, t) {
			continue
		}
		if w, _ := isafit.TierWeight(p, t.node); tiered && w < cur {
			continue
		}
		if nodeutil.NodeFit(ctx, podsOn, p, t.node) != nil {
			continue
		}
		if best == nil || m.nodeLoad(t) < m.nodeLoad(best) || (m.nodeLoad(t) == m.nodeLoad(best) && strings.Compare(t.node.Name, best.node.Name) < 0) {
			best = t
		}
	}
	return best, best != nil
}
