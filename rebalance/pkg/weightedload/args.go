package weightedload

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
)

// Defaults of the plugin's arguments.
const (
	DefaultTolerance            = 10
	DefaultHighThreshold        = 90
	DefaultMaxEvictionsPerCycle = 10
	DefaultMaxEvictionsPerNode  = 2
)

// WeightedLoadArgs configures the WeightedLoad plugin in a
// DeschedulerPolicy:
//
//	pluginConfig:
//	- name: WeightedLoad
//	  args:
//	    tolerance: 10
//	    highThreshold: 90
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
}

var _ runtime.Object = (*WeightedLoadArgs)(nil)

// DeepCopyObject implements runtime.Object.
func (a *WeightedLoadArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.Namespaces, out.LabelSelector = podscope.Copy(a.Namespaces, a.LabelSelector)
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
	return nil
}
