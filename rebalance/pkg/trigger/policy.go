package trigger

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/isamatch/isamatch/rebalance/pkg/weightedload"
)

// FromPolicy returns what Watch needs from a loaded descheduler policy:
// its node selector, and the lowest highThreshold of the profiles that
// enable WeightedLoad as a balance plugin (0 when none does: no threshold
// trigger).
func FromPolicy(p *api.DeschedulerPolicy) (sel labels.Selector, threshold int64, err error) {
	sel = labels.Everything()
	if p.NodeSelector != nil {
		if sel, err = labels.Parse(*p.NodeSelector); err != nil {
			return nil, 0, fmt.Errorf("policy nodeSelector %q: %w", *p.NodeSelector, err)
		}
	}
	for _, prof := range p.Profiles {
		if !slices.Contains(prof.Plugins.Balance.Enabled, weightedload.PluginName) {
			continue
		}
		h := int64(weightedload.DefaultHighThreshold)
		for _, pc := range prof.PluginConfigs {
			if a, ok := pc.Args.(*weightedload.WeightedLoadArgs); ok && pc.Name == weightedload.PluginName && a.HighThreshold > 0 {
				h = int64(a.HighThreshold)
			}
		}
		if threshold == 0 || h < threshold {
			threshold = h
		}
	}
	return sel, threshold, nil
}
