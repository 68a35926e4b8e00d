package mutate

import (
	"context"
	"slices"

	"github.com/go-logr/logr"

	"github.com/isamatch/isamatch/pkg/isa"
)

// enforcement is the mode for the pods of namespace ns: the namespace's
// own choice (isa.EnforcementLabel) when the cluster lets namespaces
// choose it, else Options.Enforcement.
func (p *PodMutator) enforcement(ctx context.Context, ns string) string {
	if p.opts.NamespaceEnforcement == nil || len(p.opts.NamespaceModes) == 0 || ns == "" {
		return p.opts.Enforcement
	}
	v := p.opts.NamespaceEnforcement(ctx, ns)
	switch {
	case v == "":
		return p.opts.Enforcement
	case slices.Contains(p.opts.NamespaceModes, v):
		return v
	default:
		logr.FromContextOrDiscard(ctx).V(1).Info("namespace enforcement label ignored: not a mode namespaces may choose",
			"namespace", ns, "label", isa.EnforcementLabel, "value", v, "allowed", p.opts.NamespaceModes, "using", p.opts.Enforcement)
		return p.opts.Enforcement
	}
}
