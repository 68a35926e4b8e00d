// Package budget is the rebalancer's per-namespace eviction budget: at
// most Max evictions of one namespace's pods in any sliding Window,
// counted across cycles and across the ISAFit and WeightedLoad plugins.
// Its entry point is [New]; the plugins ask [Ledger.Allow] before each
// eviction and call [Ledger.Record] after one.
//
// A tenant who can make the rebalancer act (by loading a node, or by
// owning one) can otherwise have other tenants' pods evicted cycle after
// cycle; the budget bounds what that costs any one namespace. The ledger
// lives in the rebalancer process: a restart or a change of leader starts
// it empty.
package budget
