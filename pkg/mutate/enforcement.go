package mutate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// ParseNamespaceModes reads the modes namespaces may choose
// (Options.NamespaceModes) from list: each entry one mode or a
// comma-separated list of them, without repeats; "none" alone means no
// mode (nil).
func ParseNamespaceModes(list []string) ([]string, error) {
	var modes []string
	none := false
	for _, e := range list {
		for _, m := range strings.Split(e, ",") {
			switch m = strings.TrimSpace(m); m {
			case "none":
				none = true
			case EnforcementDeny, EnforcementWarn:
				if !slices.Contains(modes, m) {
					modes = append(modes, m)
				}
			default:
				return nil, fmt.Errorf("%q is not a mode: want deny and/or warn, or none", m)
			}
		}
	}
	if none && len(modes) > 0 {
		return nil, errors.New("none with a mode: want deny and/or warn, or none alone")
	}
	return modes, nil
}
