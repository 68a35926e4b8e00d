package engine

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Tier weights of preferred terms (see the package documentation for the
// arithmetic). tierBonus[t] is the most a smaller group loses to the largest
// one of the same tier.
var (
	tierWeights     = [...]int32{100, 40, 16, 6, 2}
	tierBonus       = [...]int32{contract.MaxSizeBonus, 2, 0, 0, 0}
	qemuTierWeights = [...]int32{40, 16, 6, 2}
	qemuTierBonus   = [...]int32{2, 0, 0, 0}
)

// EmulationWeight is the weight of the preferred term for nodes whose
// emulation or cross-compilation capability satisfies isa.qemu.
const EmulationWeight = contract.EmulationWeight

func emuMatches(g *Group, emu []emuAlt) bool {
	for _, e := range emu {
		ok := e.native.isa.Arch == "" ||
			(e.native.plain && g.Native.Arch == e.native.isa.Arch) ||
			(!e.native.plain && isa.Satisfies(g.Native, e.native.isa))
		if !ok || (e.exec && !slices.Contains(g.Executes, e.q.Arch)) {
			continue
		}
		for _, em := range g.Emulated {
			if isa.Satisfies(em, e.q) {
				return true
			}
		}
	}
	return false
}

// ranking is the inventory-dependent part of a decision.
type ranking struct {
	matching  int
	preferred []corev1.PreferredSchedulingTerm // shared: never modified
	tiers     string                           // for the summary
	counts    []contract.TierCounts            // shared: never modified
	// spread is what the pod's replicas spread over (spreadOver).
	spread Spread
}

// rank scans the inventory for the alternatives, or reuses the result of an
// earlier identical scan of the same snapshot.
func (m *Matcher) rank(snap *Snapshot, qemu *isa.Request, emu []emuAlt, native []alt, own NodeConstraints) ranking {
	compute := func() ranking {
		matching, ranked := scanGroups(snap, emu, native, own)
		if own != nil && len(ranked) == 0 {
			// The pod's own constraints admit no ranked node now: rank
			// over every node, for those that join.
			matching, ranked = scanGroups(snap, emu, native, nil)
		}
		pref, runs := preferredTerms(qemu, emu, native, ranked)
		return ranking{matching: matching, preferred: pref, tiers: tiersString(qemu != nil && len(emu) > 0, pref, runs, native), counts: tierCounts(runs),
			spread: spreadOver(snap, qemu, runs)}
	}
	memo := m.memo.Load()
	if memo == nil || memo.snap != snap {
		fresh := newRankMemo(snap)
		if m.memo.CompareAndSwap(memo, fresh) {
			memo = fresh
		} else if memo = m.memo.Load(); memo.snap != snap {
			return compute() // a newer or older snapshot raced us
		}
	}
	var buf [256]byte
	key := rankKey(buf[:0], qemu != nil, emu, native)
	if own != nil {
		key = append(append(key, 'o'), own.MemoKey()...)
	}
	if r, ok := memo.get(key); ok {
		return r
	}
	r := compute()
	memo.add(key, r)
	return r
}

func appendISA(b []byte, i isa.ISA, plain bool) []byte {
	b = append(b, i.Arch...)
	if plain {
		return append(b, '!')
	}
	b = append(b, ':')
	for _, w := range i.Exts {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func rankKey(b []byte, qemu bool, emu []emuAlt, native []alt) []byte {
	if qemu {
		b = append(b, 'q')
	}
	for _, e := range emu {
		b = append(b, 'e')
		if e.exec {
			b = append(b, 'x')
		}
		b = appendISA(b, e.q, false)
		b = appendISA(b, e.native.isa, e.native.plain)
	}
	for _, n := range native {
		b = append(b, 'n')
		b = appendISA(b, n.isa, n.plain)
	}
	return b
}

type scoredGroup struct {
	g     *Group
	aff   float64
	nodes int // of all groups with g's ID
}

// scanGroups counts the inventory's nodes the required terms admit now and
// returns the groups some native alternative admits, best first:
// highest affinity, then most nodes, then id. With own, a group counts the
// nodes own admits, and one with none is left out (own.go).
func scanGroups(snap *Snapshot, emu []emuAlt, native []alt, own NodeConstraints) (matching int, ranked []scoredGroup) {
	plain := plainArches(native)
	for _, a := range plain {
		matching += snap.ArchNodes[a]
	}
	for k := range snap.Groups {
		g := &snap.Groups[k]
		counted := len(plain) > 0 && slices.Contains(plain, string(g.Native.Arch)) // by architecture
		best := 0.0
		for _, n := range native {
			if a := isa.Affinity(g.Native, n.isa); a > best {
				best = a
			}
		}
		if best == 0 {
			if !counted && emuMatches(g, emu) {
				matching += g.Nodes
			}
			continue
		}
		if !counted {
			matching += g.Nodes
		}
		nodes := g.Nodes
		if own != nil {
			if nodes = admitted(own, g); nodes == 0 {
				continue
			}
		}
		// Groups sharing an ID (same native ISA, different emulation) are
		// adjacent in the snapshot.
		if l := len(ranked); l > 0 && ranked[l-1].g.ID == g.ID {
			ranked[l-1].nodes += nodes
			continue
		}
		if ranked == nil {
			ranked = make([]scoredGroup, 0, len(snap.Groups)-k)
		}
		ranked = append(ranked, scoredGroup{g: g, aff: best, nodes: nodes})
	}
	normalisePerArch(ranked)
	slices.SortFunc(ranked, func(a, b scoredGroup) int {
		if c := cmp.Compare(b.aff, a.aff); c != 0 {
			return c
		}
		if c := cmp.Compare(b.nodes, a.nodes); c != 0 {
			return c
		}
		return strings.Compare(a.g.ID, b.g.ID)
	})
	return matching, ranked
}

const affinityEpsilon = 1e-9

// normalisePerArch divides each group's affinity by the best affinity of its
// architecture. Affinities of different architectures are not comparable (an
// arm64 base ISA has 2 features, x86-64's has 9): a pod that may run on
// several architectures finds its best fit in each of them, and the
// scheduler chooses among those.
func normalisePerArch(ranked []scoredGroup) {
	var arches [8]isa.Arch
	var best [8]float64
	n := 0
	for _, g := range ranked {
		k := slices.Index(arches[:n], g.g.Native.Arch)
		if k < 0 {
			if n == len(arches) {
				return // more architectures than exist; leave as is
			}
			k, n = n, n+1
			arches[k] = g.g.Native.Arch
		}
		best[k] = max(best[k], g.aff)
	}
	if n < 2 {
		return
	}
	for i := range ranked {
		k := slices.Index(arches[:n], ranked[i].g.Native.Arch)
		ranked[i].aff /= best[k]
	}
}

// tierRun is the groups that share one preferred-term weight.
type tierRun struct {
	weight int32
	groups []scoredGroup
}

// tiers assigns weights: affinity tiers in descending order; within a tier
// the largest groups get the tier weight, smaller ones a little less.
func tiers(ranked []scoredGroup, weights, bonus []int32) []tierRun {
	var runs []tierRun
	t, r := 0, int32(0)
	for k, g := range ranked {
		if k > 0 {
			prev := ranked[k-1]
			if g.aff < prev.aff-affinityEpsilon {
				t, r = t+1, 0
			} else if g.nodes < prev.nodes {
				r++
			}
		}
		if t >= len(weights) {
			break
		}
		w := weights[t] - min(r, bonus[t])
		if l := len(runs); l > 0 && runs[l-1].weight == w {
			runs[l-1].groups = append(runs[l-1].groups, g)
			continue
		}
		runs = append(runs, tierRun{weight: w, groups: []scoredGroup{g}})
	}
	return runs
}

// preferredTerms implements the paper's priority order. A plain architecture
// is ranked as its base ISA (rv64i, x86-64, arm64): the leanest node of the
// architecture fits best, which keeps richer nodes free for the tasks that
// need them (the paper's base-ISA tasks, RV64I, score |I| / |node|).
func preferredTerms(qemu *isa.Request, emu []emuAlt, native []alt, ranked []scoredGroup) ([]corev1.PreferredSchedulingTerm, []tierRun) {
	var out []corev1.PreferredSchedulingTerm
	if qemu != nil {
		seen := map[string]bool{}
		for _, e := range emu {
			t := corev1.NodeSelectorTerm{MatchExpressions: reqs(e.q, true)}
			if k := termKey(t); !seen[k] {
				seen[k] = true
				out = append(out, corev1.PreferredSchedulingTerm{Weight: EmulationWeight, Preference: t})
			}
		}
	}
	if len(native) == 0 {
		return out, nil
	}
	weights, bonus := tierWeights[:], tierBonus[:]
	if qemu != nil {
		weights, bonus = qemuTierWeights[:], qemuTierBonus[:]
	}
	runs := tiers(ranked, weights, bonus)
	for _, run := range runs {
		ids := make([]string, len(run.groups))
		for k, g := range run.groups {
			ids[k] = g.g.ID
		}
		slices.Sort(ids)
		out = append(out, corev1.PreferredSchedulingTerm{Weight: run.weight, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: isa.GroupLabel, Operator: corev1.NodeSelectorOpIn, Values: ids}},
		}})
	}
	return out, runs
}
