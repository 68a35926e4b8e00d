package isafit

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/rebalance/pkg/podscope"
)

// Defaults of the plugin's arguments.
const (
	DefaultMaxEvictionsPerCycle = 10
	DefaultMaxEvictionsPerNode  = 2
	DefaultMinPodAge            = 5 * time.Minute
	// DefaultMinWeightGain is one more than the largest size bonus the
	// webhook gives within a tier (contract.MaxSizeBonus): a move needs a
	// better tier, not a larger group of the same tier.
	DefaultMinWeightGain = contract.MaxSizeBonus + 1
	// DefaultRetryInterval is how long the plugin waits before it tries
	// again after an eviction was refused, while DisruptionWait lasts.
	DefaultRetryInterval = 2 * time.Second
)

// ISAFitArgs configures the ISAFit plugin in a DeschedulerPolicy:
//
//	pluginConfig:
//	- name: ISAFit
//	  args:
//	    maxEvictionsPerCycle: 10
//	    minPodAge: 5m
type ISAFitArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Namespaces limits the pods considered (include or exclude).
	Namespaces *api.Namespaces `json:"namespaces,omitempty"`
	// LabelSelector limits the pods considered.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// MaxEvictionsPerCycle bounds the evictions of one descheduling cycle.
	MaxEvictionsPerCycle int `json:"maxEvictionsPerCycle,omitempty"`
	// MaxEvictionsPerNode bounds the evictions from one node per cycle.
	MaxEvictionsPerNode int `json:"maxEvictionsPerNode,omitempty"`
	// MinPodAge is the cool-down: a pod younger than this is not moved. A
	// moved pod comes back as a new pod, so it is not moved again before
	// MinPodAge has passed.
	MinPodAge metav1.Duration `json:"minPodAge,omitempty"`
	// MinWeightGain is how much higher the isamatch tier weight of the
	// better node must be than the current node's.
	MinWeightGain int32 `json:"minWeightGain,omitempty"`
	// DisruptionWait, when positive, is how long one cycle keeps trying
	// evictions the API server refused (a PodDisruptionBudget allows no
	// disruption now): it waits RetryInterval and plans again. Zero
	// skips a refused pod until the next cycle, as descheduler's own
	// plugins do.
	DisruptionWait metav1.Duration `json:"disruptionWait,omitempty"`
	// RetryInterval is the wait between refused evictions.
	RetryInterval metav1.Duration `json:"retryInterval,omitempty"`
	// TargetNodeSelector, when set, limits the nodes a pod is moved to:
	// a node's owner controls the ISA labels its labeler writes, and a
	// node that claims a better tier would otherwise draw other tenants'
	// pods to it. Select on a label kubelets cannot set on their own Node
	// (node-restriction.kubernetes.io/..., which NodeRestriction keeps to
	// admins). Pods on other nodes may still be moved away from them.
	TargetNodeSelector *metav1.LabelSelector `json:"targetNodeSelector,omitempty"`
}

var _ runtime.Object = (*ISAFitArgs)(nil)

// DeepCopyObject implements runtime.Object.
func (a *ISAFitArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.Namespaces, out.LabelSelector = podscope.Copy(a.Namespaces, a.LabelSelector)
	out.TargetNodeSelector = a.TargetNodeSelector.DeepCopy()
	return &out
}

// SetDefaultsISAFitArgs fills the unset arguments with their defaults.
func SetDefaultsISAFitArgs(obj runtime.Object) {
	a := obj.(*ISAFitArgs)
	if a.MaxEvictionsPerCycle == 0 {
		a.MaxEvictionsPerCycle = DefaultMaxEvictionsPerCycle
	}
	if a.MaxEvictionsPerNode == 0 {
		a.MaxEvictionsPerNode = DefaultMaxEvictionsPerNode
	}
	if a.MinPodAge.Duration == 0 {
		a.MinPodAge.Duration = DefaultMinPodAge
	}
	if a.MinWeightGain == 0 {
		a.MinWeightGain = DefaultMinWeightGain
	}
	if a.RetryInterval.Duration == 0 {
		a.RetryInterval.Duration = DefaultRetryInterval
	}
}

// ValidateISAFitArgs rejects arguments the plugin cannot work with.
func ValidateISAFitArgs(obj runtime.Object) error {
	a := obj.(*ISAFitArgs)
	if a.Namespaces != nil && len(a.Namespaces.Include) > 0 && len(a.Namespaces.Exclude) > 0 {
		return fmt.Errorf("%s: namespaces: set include or exclude, not both", PluginName)
	}
	if a.MaxEvictionsPerCycle < 0 || a.MaxEvictionsPerNode < 0 {
		return fmt.Errorf("%s: maxEvictionsPerCycle %d, maxEvictionsPerNode %d: want 0 (the default) or more", PluginName, a.MaxEvictionsPerCycle, a.MaxEvictionsPerNode)
	}
	if a.MinPodAge.Duration < 0 || a.DisruptionWait.Duration < 0 || a.RetryInterval.Duration < 0 {
		return fmt.Errorf("%s: minPodAge %s, disruptionWait %s, retryInterval %s: want durations of 0 or more", PluginName, a.MinPodAge.Duration, a.DisruptionWait.Duration, a.RetryInterval.Duration)
	}
	if a.MinWeightGain < 0 || a.MinWeightGain > 100 {
		return fmt.Errorf("%s: minWeightGain %d: want 0 (the default, %d) to 100", PluginName, a.MinWeightGain, DefaultMinWeightGain)
	}
	if a.LabelSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(a.LabelSelector); err != nil {
			return fmt.Errorf("%s: labelSelector: %w", PluginName, err)
		}
	}
	if a.TargetNodeSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(a.TargetNodeSelector); err != nil {
			return fmt.Errorf("%s: targetNodeSelector: %w", PluginName, err)
		}
	}
	return nil
}
