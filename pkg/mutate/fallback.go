package mutate

import (
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// FallbackArchitectures are the values Options.FallbackArchitecture may
// take: the architectures whose nodes isamatch labels.
var FallbackArchitectures = []isa.Arch{isa.AMD64, isa.ARM64, isa.RISCV64}

// CheckFallback reports whether a is empty (no fallback) or one of
// FallbackArchitectures.
func CheckFallback(a string) error {
	if a == "" {
		return nil
	}
	names := make([]string, len(FallbackArchitectures))
	for k, f := range FallbackArchitectures {
		if string(f) == a {
			return nil
		}
		names[k] = string(f)
	}
	return fmt.Errorf("fallback architecture %q: want one of %s, or empty for none", a, strings.Join(names, ", "))
}
