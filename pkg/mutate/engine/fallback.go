package engine

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
)

// fallback is the constraint Input.Fallback adds for a pod that asks no
// ISA itself and has unknown images (unknown of them): the fallback
// architecture, combined with what the known images allow (combo, when
// constrained is set). ok is false when the known images rule the
// architecture out: they constrain the pod already and a guess must not
// turn that into a denial. The warning says which happened and why.
func (m *Matcher) fallback(arch isa.Arch, unknown int, combo []alt, constrained bool) (next []alt, ok bool, w Warning) {
	why := fmt.Sprintf("%d image%s with unknown platforms", unknown, plural(unknown))
	fa := []alt{{isa: m.plainISA(arch), plain: true}}
	if constrained {
		fa = combine(combo, fa)
	}
	if len(fa) == 0 {
		return nil, false, Warning{"fallback", fmt.Sprintf("fallback architecture %s not applied (%s): the known images need %s", arch, why, altsString(combo))}
	}
	return fa, true, Warning{"fallback", fmt.Sprintf("fallback architecture %s applied (%s): the pod is placed on %s nodes only", arch, why, arch)}
}
