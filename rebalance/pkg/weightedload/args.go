package weightedload

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// Defaults of the plugin's arguments.
const (
	DefaultTolerance            = 10
	DefaultHighThreshold        = 90
	DefaultMaxEvictionsPerCycle = 10
	DefaultMaxEvictionsPerNode  = 2
	// DefaultHysteresis, in percentage points, is added to the tolerance
	// for a measured dimension before a node is queued.
	DefaultHysteresis = 5
	// DefaultWeight is every dimension's weight: the design source adds
	// CPU%, memory%, network% and disk-IO% alike.
	DefaultWeight = 1
)

// The usage sources a policy can ask for.
const (
	// UsageRequests balances what pods request (the default).
	UsageRequests = "requests"
	// UsageMetrics balances what nodes and pods use: the Metrics API for
	// CPU and memory, Prometheus for network and disk IO; requests where
	// they have no value.
	UsageMetrics = "metrics"
)

// Weights are the weights of the dimensions in the load formula, each from
// 0 (left out) to 100; unset means DefaultWeight.
type Weights struct {
	CPU     *int32 `json:"cpu,omitempty"`
	Memory  *int32 `json:"memory,omitempty"`
	Network *int32 `json:"network,omitempty"`
	Disk    *int32 `json:"disk,omitempty"`
}

// vec returns the weights in dimension order.
func (w Weights) vec() vec {
	var out vec
	for i, p := range []*int32{w.CPU, w.Memory, w.Network, w.Disk} {
		out[i] = DefaultWeight
		if p != nil {
			out[i] = float64(*p)
		}
	}
	return out
}

// WeightedLoadArgs configures the WeightedLoad plugin in a
// DeschedulerPolicy:
//
//	pluginConfig:
//	- name: WeightedLoad
//	  args:
//	    tolerance: 10
//	    highThreshold: 90
//	    usage: metrics
//	    weights: {cpu: 1, memory: 1, network: 1, disk: 1}
type WeightedLoadArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Namespaces limits the pods moved (include or exclude).
	Namespaces *api.Namespaces `json:"namespaces,omitempty"`
	// LabelSelector limits the pods moved.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// Tolerance, in percentage points of allocatable, is how far above
	// the cluster average a node's CPU or memory share may be before it
	// joins the high-load queue; a target may not go above the average.
	Tolerance int `json:"tolerance,omitempty"`
	// HighThreshold, a percentage of allocatable CPU, puts a node above it
	// at the head of the queue.
	HighThreshold int `json:"highThreshold,omitempty"`
	// MaxEvictionsPerCycle bounds the evictions of one cycle.
	MaxEvictionsPerCycle int `json:"maxEvictionsPerCycle,omitempty"`
	// MaxEvictionsPerNode bounds the evictions from one node per cycle.
	MaxEvictionsPerNode int `json:"maxEvictionsPerNode,omitempty"`
	// Usage is what load is: UsageRequests (the default) or UsageMetrics.
	Usage string `json:"usage,omitempty"`
	// Weights weigh the dimensions in the load formula.
	Weights Weights `json:"weights,omitempty"`
	// Hysteresis, in percentage points, is added to Tolerance for a
	// measured dimension before a node is queued; once queued, a node
	// sheds pods until it is back within Tolerance.
	Hysteresis int `json:"hysteresis,omitempty"`
	// Prometheus are the queries of network and disk IO, run through the
	// Prometheus client of the policy's metricsProviders.
	Prometheus usage.Queries `json:"prometheus,omitempty"`
}

var _ runtime.Object = (*WeightedLoadArgs)(nil)

// DeepCopyObject implements runtime.Object.
func (a *WeightedLoadArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.Namespaces, out.LabelSelector = podscope.Copy(a.Namespaces, a.LabelSelector)
	for _, p := range []**int32{&out.Weights.CPU, &out.Weights.Memory, &out.Weights.Network, &out.Weights.Disk} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return &out
}

// SetDefaultsWeightedLoadArgs fills the unset arguments with their defaults.
func SetDefaultsWeightedLoadArgs(obj runtime.Object) {
	a := obj.(*WeightedLoadArgs)
	if a.Tolerance == 0 {
		a.Tolerance = DefaultTolerance
	}
	if a.HighThreshold == 0 {
		a.HighThreshold = DefaultHighThreshold
	}
	if a.MaxEvictionsPerCycle == 0 {
		a.MaxEvictionsPerCycle = DefaultMaxEvictionsPerCycle
	}
	if a.MaxEvictionsPerNode == 0 {
		a.MaxEvictionsPerNode = DefaultMaxEvictionsPerNode
	}
	if a.Usage == "" {
		a.Usage = UsageRequests
	}
	if a.Hysteresis == 0 {
		a.Hysteresis = DefaultHysteresis
	}
}

// ValidateWeightedLoadArgs rejects arguments the plugin cannot work with.
func ValidateWeightedLoadArgs(obj runtime.Object) error {
	a := obj.(*WeightedLoadArgs)
	if a.Namespaces != nil && len(a.Namespaces.Include) > 0 && len(a.Namespaces.Exclude) > 0 {
		return fmt.Errorf("%s: namespaces: set include or exclude, not both", PluginName)
	}
	if a.Tolerance < 0 || a.Tolerance > 100 || a.HighThreshold < 0 || a.HighThreshold > 100 {
		return fmt.Errorf("%s: tolerance %d, highThreshold %d: want percentages from 0 (the defaults, %d and %d) to 100", PluginName, a.Tolerance, a.HighThreshold, DefaultTolerance, DefaultHighThreshold)
	}
	if a.MaxEvictionsPerCycle < 0 || a.MaxEvictionsPerNode < 0 {
		return fmt.Errorf("%s: maxEvictionsPerCycle %d, maxEvictionsPerNode %d: want 0 (the default) or more", PluginName, a.MaxEvictionsPerCycle, a.MaxEvictionsPerNode)
	}
	if a.LabelSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(a.LabelSelector); err != nil {
			return fmt.Errorf("%s: labelSelector: %w", PluginName, err)
		}
	}
	if a.Usage != "" && a.Usage != UsageRequests && a.Usage != UsageMetrics {
		return fmt.Errorf("%s: usage %q: want %q or %q", PluginName, a.Usage, UsageRequests, UsageMetrics)
	}
	if a.Hysteresis < 0 || a.Hysteresis > 100 {
		return fmt.Errorf("%s: hysteresis %d: want percentage points from 0 (the default, %d) to 100", PluginName, a.Hysteresis, DefaultHysteresis)
	}
	w := a.Weights.vec()
	for i, v := range w {
		if v < 0 || v > 100 {
			return fmt.Errorf("%s: weights.%s %v: want 0 (left out) to 100", PluginName, usage.Dimensions[i], v)
		}
	}
	if w[cpuDim]+w[memDim] == 0 {
		return fmt.Errorf("%s: weights: cpu and memory are both 0; at least one must count (network and disk are measured only with usage %q and Prometheus)", PluginName, UsageMetrics)
	}
	return nil
}
