package engine

import (
	"slices"
	"testing"

	"github.com/isamatch/isamatch/pkg/contract"
)

// TestSizeBonusFollowsTheContract: the contract's bonus is the largest one
// the tiers give, so a weight gain above it is a better tier (what the
// rebalancer and kubectl isa read back).
func TestSizeBonusFollowsTheContract(t *testing.T) {
	if got := max(slices.Max(tierBonus[:]), slices.Max(qemuTierBonus[:])); got != contract.MaxSizeBonus {
		t.Errorf("largest size bonus %d, contract.MaxSizeBonus %d", got, contract.MaxSizeBonus)
	}
}
