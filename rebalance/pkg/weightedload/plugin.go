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
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/isafit"
	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
)

// PluginName is the name the policy enables the plugin by.
const PluginName = "WeightedLoad"

// WeightedLoad is the descheduler Balance plugin that moves pods off nodes
// loaded above the cluster's size-weighted average.
type WeightedLoad struct {
	handle frameworktypes.Handle
	args   *WeightedLoadArgs
	filter podutil.FilterFunc
	budget *budget.Ledger
}

var _ frameworktypes.BalancePlugin = (*WeightedLoad)(nil)

// Register adds the plugin to a descheduler plugin registry; every
// instance counts its evictions in b, the per-namespace budget the
// rebalancer's plugins share (nil: no budget).
func Register(r pluginregistry.Registry, b *budget.Ledger) {
	pluginregistry.Register(PluginName, Builder(b), &WeightedLoad{}, &WeightedLoadArgs{}, ValidateWeightedLoadArgs, SetDefaultsWeightedLoadArgs, r)
}

// Builder returns the plugin's builder with the eviction budget b.
func Builder(b *budget.Ledger) pluginregistry.PluginBuilder {
	return func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		p, err := New(ctx, args, handle)
		if err != nil {
			return nil, err
		}
		p.(*WeightedLoad).budget = b
		return p, nil
	}
}

// New builds the plugin from its arguments (already defaulted and
// validated by descheduler), without an eviction budget.
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

// Balance works through the high-load queue, worst node first, evicting
// from each until it is back within Tolerance of the average (see the
// package documentation for which pods and where to).
func (d *WeightedLoad) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	log := klog.FromContext(ctx).WithValues("plugin", PluginName)
	podsOn := d.handle.GetPodsAssignedToNodeFunc()
	loads := make([]*load, 0, len(nodes))
	for _, n := range nodes {
		pods, err := podutil.ListPodsOnANode(n.Name, podsOn, nil)
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: list pods on node %s: %w", PluginName, n.Name, err)}
		}
		loads = append(loads, newLoad(n, pods))
	}
	avg := clusterAverage(loads)
	tol, high := float64(d.args.Tolerance)/100, float64(d.args.HighThreshold)/100
	queue := highLoadQueue(loads, avg, tol, high)
	log.V(1).Info("High-load queue", "nodes", len(queue), "averageCPU", avg.cpu, "averageMemory", avg.mem)
	evicted := 0
	for _, src := range queue {
		pods, err := podutil.ListPodsOnANode(src.node.Name, podsOn, func(p *v1.Pod) bool { return movable(p) && d.filter(p) })
		if err != nil {
			return &frameworktypes.Status{Err: fmt.Errorf("%s: list pods on node %s: %w", PluginName, src.node.Name, err)}
		}
		slices.SortFunc(pods, evictionOrder)
		perNode := 0
		for _, p := range pods {
			if evicted >= d.args.MaxEvictionsPerCycle {
				return nil
			}
			if perNode >= d.args.MaxEvictionsPerNode || src.score(avg) >= -tol {
				break
			}
			if !src.helps(p, avg, tol) {
				continue
			}
			t, ok := target(ctx, p, src, loads, avg, podsOn)
			if !ok || !d.handle.Evictor().PreEvictionFilter(p) {
				continue
			}
			if !d.budget.Allow(p.Namespace) {
				log.V(1).Info("Namespace eviction budget spent", "pod", klog.KObj(p), "budget", d.budget.Max())
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
				d.budget.Record(p.Namespace)
				src.move(p, t)
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

// target is the node that takes p without going above the average, runs
// no more of p's siblings than src will (spreadAllows), passes the fit
// check and is of an isamatch tier at least as good as p's current node:
// of those, the one with the most slack.
func target(ctx context.Context, p *v1.Pod, src *load, loads []*load, avg average, podsOn podutil.GetPodsAssignedToNodeFunc) (*load, bool) {
	cur, tiered := isafit.TierWeight(p, src.node)
	var best *load
	for _, t := range loads {
		if t == src || !t.takes(p, avg) || !src.spreadAllows(p, t) {
			continue
		}
		if w, _ := isafit.TierWeight(p, t.node); tiered && w < cur {
			continue
		}
		if nodeutil.NodeFit(ctx, podsOn, p, t.node) != nil {
			continue
		}
		if best == nil || t.slack(avg) > best.slack(avg) || (t.slack(avg) == best.slack(avg) && strings.Compare(t.node.Name, best.node.Name) < 0) {
			best = t
		}
	}
	return best, best != nil
}
